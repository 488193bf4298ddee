"""Issue 48.1: the ledger beside a compaction's summary, found without a model."""

from __future__ import annotations

from swedeck.core.agent.ledger import ledger_of
from swedeck.core.messages import MessageType, make_message


def step(call_id: str, command: str, output: str, code: int, tool: str = "bash", **arguments: str) -> list:
    return [make_message("assistant", "", MessageType.ACTION, actions=[{"command": command, "tool_call_id": call_id,
                                                                         "unknown": arguments}]),
            make_message("tool", output, MessageType.OBSERVATION, tool_call_id=call_id, command=command,
                         returncode=code, raw_output=output)]


RUN = [
    *step("c1", "cat src/calc.py", "def divide(a, b):\n    return a / b\n", 0),
    *step("c2", "python -m pytest tests/test_calc.py -q",
          "FAILED tests/test_calc.py::test_divide_by_zero - ZeroDivisionError\n"
          "E   ZeroDivisionError: division by zero\n1 failed, 3 passed\n", 1),
    make_message("user", "Keep the public API as it is.", MessageType.USER_MESSAGE),
    *step("c3", "edit src/calc.py", "ok", 0, file_path="src/calc.py"),
    *step("c4", "python -m unittest", "FAIL: test_round (test_util.UtilTests)\nAssertionError: 1 != 2\n", 1),
]


def test_the_ledger_keeps_paths_commands_tests_errors_and_the_persons_words():
    ledger = ledger_of(RUN)
    assert ledger.files == ["src/calc.py", "tests/test_calc.py"]
    assert ledger.commands[:2] == ["`cat src/calc.py` (exit 0)", "`python -m pytest tests/test_calc.py -q` (exit 1)"]
    assert ledger.failing_tests == ["tests/test_calc.py::test_divide_by_zero", "test_util.UtilTests.test_round"]
    assert ledger.errors == ["`python -m pytest tests/test_calc.py -q`: E   ZeroDivisionError: division by zero",
                             "`python -m unittest`: AssertionError: 1 != 2"]
    assert ledger.words == ["Keep the public API as it is."]
    text = ledger.text()
    assert "Failing tests:\n- tests/test_calc.py::test_divide_by_zero" in text and "cut" not in text


def test_a_long_ledger_keeps_paths_and_failing_tests_and_says_what_it_cut():
    many = [message for number in range(200) for message in step(f"x{number}", f"echo {number} " + "word " * 20,
                                                                   "fine", 0)]
    ledger = ledger_of([*RUN, *many], max_tokens=300)
    assert ledger.cut > 0 and f"({ledger.cut} older entries cut" in ledger.text()
    assert ledger.files == ["src/calc.py", "tests/test_calc.py"]
    assert len(ledger.failing_tests) == 2
    assert ledger.commands[-1].startswith("`echo 199 ")  # the newest stay


def test_nothing_touched_is_an_empty_ledger():
    assert ledger_of([make_message("assistant", "thinking", MessageType.ASSISTANT_MESSAGE)]).empty()
