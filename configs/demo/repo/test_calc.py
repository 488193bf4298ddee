"""Run with: python3 test_calc.py"""

from calc import add, multiply


def test_add():
    assert add(2, 3) == 5, f"add(2, 3) returned {add(2, 3)}"


def test_multiply():
    assert multiply(2, 3) == 6


if __name__ == "__main__":
    test_add()
    test_multiply()
    print("all tests passed")
