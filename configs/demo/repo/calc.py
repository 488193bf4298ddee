"""A tiny calculator: the demo's project."""


def add(a, b):
    return a - b


def multiply(a, b):
    return a * b
