"""Issue 48.1: the ledger beside a compaction's summary, found without a model."""

from __future__ import annotations

from swedeck.core.messages import MessageType, make_message
from swedeck.core.trajectory.ledger import ledger_of


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


def test_the_loss_report_counts_what_survives_a_compaction_with_and_without_the_ledger():
    """Issue 48.2: of what the replaced part touched, how much the model still saw after it. With
    swedeck's ledger every path and failing test survives; a summary alone loses them."""
    from swedeck.core.trajectory.losses import compaction_losses, losses_line

    head = [make_message("system", "You are an agent.", MessageType.SYSTEM),
            make_message("user", "Fix the divide bug.", MessageType.TASK)]
    replaces = list(range(len(head), len(head) + len(RUN)))
    summary = "We looked at the calculator and a test failed."
    for with_ledger in (True, False):
        text = summary + ("\n\n" + ledger_of(RUN).text() if with_ledger else "")
        marker = make_message("user", text, MessageType.COMPACTION, summary=summary, replaces=replaces,
                              tokens_before=5000, tokens_after=800)
        [report] = compaction_losses([*head, *RUN, marker])
        kinds = report["kinds"]
        assert report["replaced_messages"] == len(RUN) and report["tokens_before"] == 5000
        assert kinds["paths"][0] == 2 and kinds["failing tests"][0] == 2 and kinds["commands"][0] == 4
        if with_ledger:
            assert all(kept == total for total, kept in kinds.values()), kinds
        else:
            assert kinds["paths"][1] == 0 and kinds["failing tests"][1] == 0
            assert "paths 0/2" in losses_line(report)


def test_other_agents_compactions_have_a_loss_report(tmp_path):
    import json
    import subprocess

    from conftest import FIXTURES, swedeck_command

    path = FIXTURES / "agents" / "claude-code" / "cc-session-1.jsonl"
    done = subprocess.run([*swedeck_command(), "replay", str(path), "--print", "--json"], capture_output=True,
                          text=True, timeout=60)
    fidelity = json.loads(done.stdout.splitlines()[0])["fidelity"]
    [report] = fidelity["compaction_losses"]
    assert report["label"].startswith("compacted: 180,000") and report["kinds"]["commands"] == [3, 1]
    shown = subprocess.run([*swedeck_command(), "replay", str(path), "--print"], capture_output=True, text=True,
                           timeout=60).stdout
    assert "compaction at message 6 (compacted: 180,000 -> summary): paths 0/1, commands 1/3" in shown


def test_the_loss_report_is_on_the_compactions_marker_in_replay_and_the_html_export():
    """Issue 48.2: the step after a compaction says, beside its figures, what it kept."""
    from conftest import FIXTURES
    from swedeck.core.export.html import to_html
    from swedeck.core.replay.document import open_document
    from swedeck.core.trajectory.loader import load_trajectory

    path = FIXTURES / "agents" / "claude-code" / "cc-session-1.jsonl"
    document = open_document(path)
    marked = [document.step(number) for number in range(1, document.step_count + 1)]
    [view] = [view for view in marked if view.compaction]
    assert view.compaction == "compacted: 180,000 -> summary"  # the step list's mark
    assert view.compaction_detail == ("acted on 180,000 · provider's last count 12,278 (gap +167,722)"
                                      " · kept: paths 0/1 · commands 1/3 · person's words 0/1")  # and the meter's
    page = to_html(load_trajectory(path)).data.decode()
    assert "kept: paths 0/1 · commands 1/3" in page


def test_compaction_records_that_do_not_fit_are_said_and_never_change_the_prompt(tmp_path):
    """Issue 48, bad input: `replaces` out of range, negative, unsorted, repeated, naming later
    messages, overlapping an earlier compaction, not a list; a ledger with markup and escapes."""
    import json
    import subprocess

    from conftest import swedeck_command
    from swedeck.core.trajectory.compaction import compacted
    from swedeck.core.trajectory.loader import load_trajectory

    def message(role: str, content: str, kind: str, **extra: object) -> dict:
        return {"role": role, "content": content, "extra": {"message_type": kind, **extra}}

    def answer(n: int) -> dict:
        return message("assistant", f"step {n}\n```bash\necho {n}\n```", "action", step=n)

    messages = [message("system", "sys", "system"), message("user", "the task", "task"),
                answer(1), message("user", "out 1", "observation"), answer(2), message("user", "out 2", "observation"),
                message("user", "summary one [bold]x[/bold] \x1b[31m", "compaction", summary="one",
                        replaces=[3, 2, 2, -1, 999]),
                answer(3), message("user", "out 3", "observation"),
                message("user", "summary two", "compaction", summary="two", replaces=[2, 3, 4, 9]),
                answer(4), message("user", "out 4", "observation"),
                message("user", "summary three", "compaction", summary="three", replaces="all of it"),
                answer(5)]
    path = tmp_path / "bad.traj.json"
    path.write_text(json.dumps({"trajectory_format": "swedeck-1", "info": {}, "messages": messages}))
    trajectory = load_trajectory(path)
    seen = [m.text for m in compacted(list(trajectory.messages))]
    assert "out 3" in seen and "step 4\n```bash\necho 4\n```" in seen  # what came after a marker is never dropped
    assert "out 1" not in seen and "step 2\n```bash\necho 2\n```" not in seen  # what came before it, as named
    done = subprocess.run([*swedeck_command(), "replay", str(path), "--print"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "note: compaction at message 6: replaces names 2 positions that are not before it (-1, 999); ignored" in out
    assert "note: compaction at message 6: replaces repeats positions; read as the set of them" in out
    assert "note: compaction at message 9: replaces names 2 messages an earlier compaction already replaced (2, 3)" in out
    assert "note: compaction at message 9: replaces names 1 positions that are not before it (9); ignored" in out
    assert "note: compaction at message 12: its replaces is not a list of message positions ('all of it')" in out
    assert "\x1b" not in out  # the summary's escape is shown, not sent to the terminal


def test_the_loss_report_is_the_same_when_the_messages_are_built_again():
    """A lazy list keeps its latest built messages only (issue 49): a message built again is a
    new object, and the report tells the replaced part from the kept one by identity."""
    from pathlib import Path

    import msgspec

    from swedeck.core.trajectory.lazy import MessageList
    from swedeck.core.trajectory.losses import compaction_losses

    head = [make_message("system", "You are an agent.", MessageType.SYSTEM),
            make_message("user", "Fix the divide bug.", MessageType.TASK)]
    marker = make_message("user", "We looked at the calculator.", MessageType.COMPACTION, summary="We looked.",
                          replaces=list(range(len(head), len(head) + len(RUN))), tokens_before=5000)
    records = [*head, *RUN, marker]
    whole = compaction_losses(records)

    def build(start: int, end: int) -> list:  # as a reader does: each message made from its record again
        return [msgspec.structs.replace(record) for record in records[start:end]]

    lazy = MessageList(len(records), list(range(len(records))), build, Path("run.traj.json"))
    lazy.KEEP = 1  # every message built again when it is read again
    assert compaction_losses(lazy) == whole
    assert whole[0]["replaced_messages"] == len(RUN)


def test_each_compaction_carries_the_ledgers_it_replaces_forward():
    """Issue 62.1: a second compaction replaced the first one's marker and kept only its own
    part's commands; every path and failing test must survive 1, 3 and 10 compactions, and the
    loss report must count against everything a compaction stands for."""
    from swedeck.core.trajectory.losses import compaction_losses

    history = [make_message("system", "You are an agent.", MessageType.SYSTEM),
               make_message("user", "Fix the divide bug.", MessageType.TASK), *RUN]
    for number in range(10):
        filler = [message for n in range(3) for message in step(f"s{number}.{n}", "seq 1 400",
                                                                "\n".join(map(str, range(1, 401))), 0)]
        start = 2 if number == 0 else len(history) - 1  # the earlier marker is replaced with the new part
        history += filler
        replaced = history[start:]
        ledger = ledger_of(replaced, max_tokens=1000)
        marker = make_message("user", f"summary {number}\n\n{ledger.text()}", MessageType.COMPACTION,
                              summary=f"summary {number}", replaces=list(range(start, len(history))), ledger=ledger.text())
        history.append(marker)
        kept = ledger_of([marker])  # what the marker carries, read back
        assert kept.files == ["src/calc.py", "tests/test_calc.py"], (number, kept.files)
        assert kept.failing_tests == ["tests/test_calc.py::test_divide_by_zero", "test_util.UtilTests.test_round"]
        assert "Keep the public API as it is." in kept.words
        reports = compaction_losses(history)
        latest = reports[-1]["kinds"]
        assert latest["paths"] == [2, 2] and latest["failing tests"] == [2, 2], (number, latest)
