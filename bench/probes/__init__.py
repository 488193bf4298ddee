"""Measurements that run in their own interpreter (see `bench.probe`). Each prints one JSON
object as its last line of stdout."""
