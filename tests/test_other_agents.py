"""Other agents' records (SPEC §9.3): ATIF and Harbor folders, Claude Code, Codex, OpenHands and
Inspect logs, through the real loader, `replay --print`, `prompt` and fork. The fixtures in
tests/fixtures/agents/ were written by us in each format; the owners' own readers check them
in test_owner_readers.py."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import swedeck_command
from swedeck.core.messages import MessageType
from swedeck.core.prompt_view import step_prompt
from swedeck.core.replay.fork import fork_history
from swedeck.core.trajectory.errors import TrajectoryError
from swedeck.core.trajectory.fidelity import summary
from swedeck.core.trajectory.loader import load_trajectory, trajectory_files

AGENTS = Path(__file__).parent / "fixtures" / "agents"
CLAUDE = AGENTS / "claude-code" / "cc-session-1.jsonl"
CODEX = AGENTS / "codex" / "rollout-2026-11-20T10-00-00-0199-codex.jsonl"
OPENHANDS_V0 = AGENTS / "openhands" / "v0-events.json"
OPENHANDS_EVAL = AGENTS / "openhands" / "eval-output.jsonl"
OPENHANDS_V1 = AGENTS / "openhands" / "v1-conversation"
INSPECT_JSON = AGENTS / "inspect" / "calc.json"
INSPECT_EVAL = AGENTS / "inspect" / "calc.eval"
ATIF_PLAIN = AGENTS / "atif" / "v1.5-plain.json"
ATIF_SUBAGENTS = AGENTS / "atif" / "v1.8-subagents.json"
HARBOR_JOB = AGENTS / "harbor-job"

# file, format, steps, the commands of every step, provenance of the prompts
CASES = [
    (ATIF_PLAIN, "atif", [["ls"], ["cat calc.py", "read_file test_calc.py"],
                          ["sed -i 's/ - 1)/)/' calc.py && python -m pytest -q"], []], "reconstructed"),
    (ATIF_SUBAGENTS, "atif", [[], ["Task find tests"], ["npm run build"]], "reconstructed"),
    (HARBOR_JOB / "trial-a__x1", "atif", [["ls"], ["cat calc.py", "read_file test_calc.py"],
                                           ["sed -i 's/ - 1)/)/' calc.py && python -m pytest -q"], []], "reconstructed"),
    (CLAUDE, "claude-code", [["ls"], ["Read /work/calc/calc.py", "python -m pytest -q"],
                             ["Edit /work/calc/calc.py (len(xs) - 1) len(xs)"], ["python -m pytest -q"], []],
     "reconstructed"),
    (CODEX, "codex", [["ls"], [f"apply_patch {'*** Begin Patch'}"], ["python -m pytest -q"], []], "reconstructed"),
    (OPENHANDS_V0, "openhands", [["ls"], ["cat calc.py", "str_replace_editor view /workspace/test_calc.py"],
                                 ["sed -i 's/ - 1)/)/' calc.py && python -m pytest -q"],
                                 ["finish Fixed the off-by-one."]], "reconstructed"),
    (OPENHANDS_V1, "openhands", [["ls"], ["sed -i 's/ - 1)/)/' calc.py", "file_editor view /w/test_calc.py"],
                                 ["finish Fixed."]], "reconstructed"),
    (INSPECT_JSON, "inspect", [["ls"], ["text_editor view calc.py"], []], "recorded"),
    (INSPECT_EVAL, "inspect", [["ls"], ["text_editor view calc.py"], []], "recorded"),
]


@pytest.mark.parametrize(("path", "kind", "commands", "provenance"), CASES, ids=lambda v: getattr(v, "name", None))
def test_each_format_reads_into_steps(path, kind, commands, provenance):
    trajectory = load_trajectory(path)
    assert trajectory.format == kind
    got = [[command.splitlines()[0] for command in step.commands] for step in trajectory.steps]
    assert got == commands
    record = summary(trajectory)
    assert record["steps"] == len(commands) and record["prompt"] == provenance
    assert record["tool_calls"] == sum(len(step) for step in commands)
    for step in trajectory.steps:  # every call is answered by its own output, in order
        answered = [trajectory.messages[i].tool_call_id for i in step.observation_indices
                    if trajectory.messages[i].role == "tool"]
        assert answered == [action.tool_call_id for action in step.actions][: len(answered)]


def test_claude_code_follows_the_main_line_through_a_compaction():
    trajectory = load_trajectory(CLAUDE)
    record = summary(trajectory)
    # the thinking, text and tool_use lines of msg_1 are one step with the last line's usage
    first = trajectory.steps[0]
    assert trajectory.messages[first.message_index].extra.reasoning == "List the files first."
    assert trajectory.messages[first.message_index].text == "Let me look at the project."
    assert (first.usage.prompt_tokens, first.usage.cached_tokens, first.usage.completion_tokens) == (12012, 9000, 85)
    assert record["usage"] == "provider-reported" and record["compactions"] == 1
    # a rewound answer and a sidechain are branches; the subagent file beside it is one more
    assert record["branches"] == 3 and "(abandoned answer)" not in [m.text for m in trajectory.messages]
    assert record["skipped"] == {"(damaged line)": 1, "file-history-snapshot": 1, "queue-operation": 1,
                                 "some-future-record": 1, "summary": 1, "system/informational": 1}
    assert any("line 21: damaged" in warning for warning in trajectory.info.warnings)
    # what step 3 saw starts at the summary: nothing before the compaction is in it
    prompt = step_prompt(trajectory, 3)
    assert prompt.provenance == "reconstructed"
    assert [line.message.message_type for line in prompt.lines] == [MessageType.COMPACTION]
    assert prompt.lines[0].message.text.startswith("This session is being continued")
    assert [line.message.role for line in step_prompt(trajectory, 2).lines] == ["user", "assistant", "tool"]


def test_codex_items_usage_window_and_compaction():
    trajectory = load_trajectory(CODEX)
    first = trajectory.steps[0]
    assert first.actions[0].command == "ls" and first.usage.prompt_tokens == 4000 and first.usage.cached_tokens == 3000
    assert first.context.window == 272000
    output = trajectory.messages[first.observation_indices[0]]
    assert output.text == "calc.py\ntest_calc.py\n" and output.extra.returncode == 0
    patch = trajectory.steps[1].actions[0]
    assert patch.command.startswith("apply_patch *** Begin Patch") and not patch.unknown["shell"]
    assert trajectory.steps[3].usage is None  # no token_count after the last answer: estimated
    record = summary(trajectory)
    assert record["usage"] == "mixed" and record["compactions"] == 1
    assert record["skipped"]["response_item/web_search_call"] == 1
    assert trajectory.info.model_name == "gpt-5-codex"
    prompt = step_prompt(trajectory, 3)  # after `compacted`: the developer message, then the summary
    assert [line.message.message_type for line in prompt.lines] == [MessageType.SYSTEM, MessageType.COMPACTION]


def test_openhands_condensation_forgets_its_events():
    trajectory = load_trajectory(OPENHANDS_V0)
    texts = [line.message.text for line in step_prompt(trajectory, 3).lines]
    assert "calc.py\ntest_calc.py" not in texts  # event 5, forgotten
    assert "Listed files: calc.py, test_calc.py." in texts
    assert "calc.py\ntest_calc.py" in [line.message.text for line in step_prompt(trajectory, 2).lines]
    # two tool calls of one model response are one step, with that response's usage
    second = trajectory.steps[1]
    assert len(second.actions) == 2 and second.usage.prompt_tokens == 3400 and second.usage.cached_tokens == 3000
    assert summary(trajectory)["parts"]["system prompt"] == "recorded"


def test_an_openhands_evaluation_opens_one_instance_and_keeps_its_patch_byte_for_byte():
    first = load_trajectory(OPENHANDS_EVAL)
    record = json.loads(OPENHANDS_EVAL.read_text().splitlines()[0])
    assert first.info.submission == record["test_result"]["git_patch"]
    assert summary(first)["units"] == 2 and len(first.steps) == 4
    second = load_trajectory(f"{OPENHANDS_EVAL}#2")
    assert second.info.session["instance_id"] == "calc__calc-2" and "stuck in loop" in second.info.exit_status
    with pytest.raises(TrajectoryError, match="#3: the file has 2 instances"):
        load_trajectory(f"{OPENHANDS_EVAL}#3")


def test_an_inspect_log_builds_a_recorded_input_only_when_it_is_shown(tmp_path):
    """Each model event's input repeats the whole history: asking which steps are recorded
    (the fidelity summary, every step's provenance) must not build them, and reading them all
    keeps a few, not the square of the run (a 20 MB log took minutes to print)."""
    from bench.generate import write_inspect_json
    trajectory = load_trajectory(write_inspect_json(tmp_path / "run.json", 60, 200))
    prompts = trajectory.recorded_prompts
    assert summary(trajectory)["steps_by_provenance"] == {"recorded": 60}
    assert 60 in prompts and 61 not in prompts and not len(prompts.kept)
    for number in range(1, 61):
        assert len(prompts[number]) == 2 * number  # system and task, then a call and its output per step before
    assert len(prompts.kept) <= prompts.keep == 4


@pytest.mark.parametrize("suffix", [".json", ".eval"])
def test_an_inspect_sample_s_messages_are_read_when_their_step_is_shown(tmp_path, monkeypatch, suffix):
    """Issue 49: the plan reads each message's head (role, id, a summary's mark, how many tool
    calls); a message is read whole when its step is shown, and what it shows is what the
    whole reading gives."""
    from bench.generate import write_inspect_eval, write_inspect_json
    from swedeck.core.trajectory.readers import inspect_log

    write = write_inspect_eval if suffix == ".eval" else write_inspect_json
    path = write(tmp_path / f"run{suffix}", 40, 200)
    made: list[str] = []
    entry = inspect_log._entry
    monkeypatch.setattr(inspect_log, "_entry", lambda message, first: (made.append(message.get("role")), entry(message, first))[1])
    trajectory = load_trajectory(path, lazy=True)
    assert made == [] and len(trajectory.steps) == 40
    last = trajectory.steps[-1]
    shown = [trajectory.messages[index] for index in (last.message_index, *last.observation_indices)]
    assert 0 < len(made) < 10  # that step's block, not the sample
    monkeypatch.setattr(inspect_log, "_entry", entry)
    records_at = inspect_log.records_at  # the messages parsed whole, as a sample read whole is
    monkeypatch.setattr(inspect_log, "records_at", lambda document, key, head: document[key] if key == "messages"
                        else records_at(document, key, head))
    whole = load_trajectory(path)
    assert [message.text for message in shown] == [whole.messages[index].text
                                                    for index in (last.message_index, *last.observation_indices)]
    assert list(trajectory.messages) == list(whole.messages)


@pytest.mark.parametrize("path", [INSPECT_JSON, INSPECT_EVAL], ids=["json", "eval"])
def test_inspect_shows_the_recorded_input(path):
    trajectory = load_trajectory(path)
    assert trajectory.messages[1].text.startswith("Fix the failing test in calc.py x")  # an attachment, put back
    second = step_prompt(trajectory, 2)  # input_refs [[0, 4]] into the sample's message pool
    assert second.provenance == "recorded" and [line.message.role for line in second.lines] == \
        ["system", "user", "assistant", "tool"]
    third = step_prompt(trajectory, 3)  # recorded inline, with a message only that call was sent
    assert third.lines[-1].message.text == "(a note the solver added to this call only)"
    assert trajectory.steps[1].usage.prompt_tokens == 140 and trajectory.steps[1].usage.cached_tokens == 100
    record = summary(trajectory)
    assert record["steps_by_provenance"] == {"recorded": 3} and record["units"] == 2
    assert "model call outside the sample's messages (a scorer, a sub-agent)" in record["skipped"]
    assert trajectory.info.exit_status == "scored: includes=C"
    error = trajectory.messages[trajectory.steps[1].observation_indices[0]]
    assert error.text == "calc.py: permission denied"
    second_sample = load_trajectory(f"{path}#2")
    assert [m.text for m in second_sample.messages][-1] == "ok" and summary(second_sample)["unit"] == 2


def test_branches_open_by_their_target(tmp_path):
    """A Claude Code sidechain, a rewound line and a subagent file, an ATIF subagent embedded in
    the file and one referenced beside it: each opens through the loader by its `target`."""
    claude = summary(load_trajectory(CLAUDE))
    targets = {branch["label"].split(" of ")[0].split(" file")[0]: branch["target"] for branch in claude["branch_list"]}
    assert targets == {"branch": f"{CLAUDE}#ax", "sidechain": f"{CLAUDE}#s2",
                       "subagent": str(CLAUDE.with_suffix("") / "subagents" / "agent-ag1.jsonl")}
    rewound = load_trajectory(targets["branch"])
    assert [step.actions[0].command for step in rewound.steps[:1]] == ["ls"]
    assert rewound.messages[-1].text == "(abandoned answer)"
    assert f"{CLAUDE}#a8" in [b["target"] for b in summary(rewound)["branch_list"]]  # the main line, from the branch
    with pytest.raises(TrajectoryError, match="#nope: no record with that uuid"):
        load_trajectory(f"{CLAUDE}#nope")
    with pytest.raises(TrajectoryError, match="#s2: a codex file has no branches"):
        load_trajectory(f"{CODEX}#s2")
    copy = tmp_path / "run.json"
    copy.write_text(ATIF_SUBAGENTS.read_text())
    (tmp_path / "sub-1.json").write_text(ATIF_PLAIN.read_text())  # the referenced subagent, beside it
    nested = summary(load_trajectory(copy))["branch_list"]
    assert [branch["target"] for branch in nested] == [str(tmp_path / "sub-1.json"), f"{copy}#sub-1"]
    embedded = load_trajectory(nested[1]["target"])
    assert embedded.format == "atif" and embedded.info.session["agent"] == "explorer" and len(embedded.steps) == 1
    with pytest.raises(TrajectoryError, match="#sub-9: no embedded subagent trajectory"):
        load_trajectory(f"{copy}#sub-9")
    printed = subprocess.run([*swedeck_command(), "replay", str(CLAUDE), "--print"], capture_output=True, text=True)
    assert f"sidechain of 2 records, ending 'Only calc.py uses it.': {CLAUDE}#s2" in printed.stdout


def test_atif_usage_subagents_and_harbor_reward():
    plain = load_trajectory(ATIF_PLAIN)
    assert plain.info.model_stats.prompt_tokens == 2590 and plain.info.model_stats.instance_cost == 0.0035
    assert plain.steps[1].usage.cached_tokens == 512 and plain.steps[0].cost == 0.001
    assert summary(plain)["parts"] == {"system prompt": "recorded", "tools": "recorded", "messages": "reconstructed"}
    nested = summary(load_trajectory(ATIF_SUBAGENTS))
    assert nested["branches"] == 2 and any("continues in trajectory.cont-1.json" in note for note in nested["notes"])
    trial = load_trajectory(HARBOR_JOB / "trial-b__x2")
    assert trial.info.exit_status == "reward reward=0.0" and len(trial.steps) == 2


def write_unlinked_session(path: Path) -> Path:
    """A Claude Code session whose records do not all link up: parentUuid null after the first,
    a parent that is not in the file (the session was resumed from another), and a uuid that
    repeats (a resumed session copies records), as in claude-code-log's own test data."""
    base = {"isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": "u", "version": "1.0.0",
            "timestamp": "2026-11-20T10:00:00Z"}

    def assistant(uuid, parent, content, message_id):
        return {**base, "type": "assistant", "uuid": uuid, "parentUuid": parent,
                "message": {"id": message_id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                            "content": content, "usage": {"input_tokens": 10, "output_tokens": 5}}}

    def user(uuid, parent, content):
        return {**base, "type": "user", "uuid": uuid, "parentUuid": parent, "message": {"role": "user", "content": content}}

    records = [user("r1", None, "List the files"),
               assistant("r2", None, [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}], "m1"),
               user("r3", None, [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py"}]),
               assistant("r4", "elsewhere", [{"type": "text", "text": "One file: a.py."}], "m2"),
               user("r5", "r4", "And now?"),
               user("r5", "r4", "And now? (copied)"),
               assistant("r6", None, [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "cat a.py"}}],
                         "m3"),
               user("r7", "r6", [{"type": "tool_result", "tool_use_id": "t2", "content": "print(1)"}])]
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def test_a_claude_code_session_that_does_not_link_up_reads_in_file_order(tmp_path):
    trajectory = load_trajectory(write_unlinked_session(tmp_path / "s.jsonl"))
    assert [step.commands for step in trajectory.steps] == [["ls"], [], ["cat a.py"]]
    assert [m.text for m in trajectory.messages if m.role == "user"][-1] == "And now? (copied)"
    record = summary(trajectory)
    assert record["branches"] == 1  # the first copy of r5, which the second replaced
    assert any("4 records name no parent in this file" in note for note in record["notes"])


def test_a_folder_lists_every_agents_record():
    found = {path.relative_to(AGENTS).as_posix() for path in trajectory_files(AGENTS)}
    assert found == {"atif/harbor-0.25.0-of-mini-v2-tool-calls.json", "atif/v1.5-plain.json", "atif/v1.8-subagents.json", "claude-code/cc-session-1.jsonl",
                     "claude-code/cc-session-1/subagents/agent-ag1.jsonl", "codex/" + CODEX.name,
                     "harbor-job/trial-a__x1/agent/trajectory.json", "harbor-job/trial-b__x2/agent/trajectory.json",
                     "inspect/calc.eval", "inspect/calc.json", "openhands/eval-output.jsonl",
                     "openhands/v0-events.json", "openhands/v1-conversation/events"}
    for path in sorted(trajectory_files(AGENTS)):
        assert load_trajectory(path).steps, path


def test_print_json_starts_with_the_fidelity_summary():
    result = subprocess.run([*swedeck_command(), "replay", str(CLAUDE), "--print", "--json"], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    first, *steps = map(json.loads, result.stdout.splitlines())
    assert first["fidelity"]["format"] == "claude-code" and first["fidelity"]["prompt"] == "reconstructed"
    assert first["fidelity"]["skipped"]["summary"] == 1
    assert [step["provenance"] for step in steps] == ["reconstructed"] * 5
    assert steps[2]["compaction"] == "compacted: 180,000 -> summary"
    text = subprocess.run([*swedeck_command(), "replay", str(INSPECT_EVAL), "--print"], capture_output=True,
                          text=True, timeout=60).stdout
    assert "what the model saw: recorded  (3 recorded steps)" in text and "runs in this file: 2 (run 1 is open" in text


def test_prompt_command_says_how_the_prompt_is_known():
    result = subprocess.run([*swedeck_command(), "prompt", str(INSPECT_EVAL), "--step", "3", "--json"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["provenance"] == "recorded"
    assert record["messages"][-1]["content"] == "(a note the solver added to this call only)"
    text = subprocess.run([*swedeck_command(), "prompt", str(CODEX), "--step", "3"], capture_output=True, text=True,
                          timeout=60).stdout
    assert "(codex; reconstructed)" in text and "(compaction)" in text


def test_fork_maps_shell_calls_to_bash_and_other_tools_to_text():
    history = fork_history(load_trajectory(CLAUDE), 2)
    calls = [call for message in history for call in message.tool_calls or ()]
    assert [(call.function.name, json.loads(call.function.arguments)) for call in calls] == [("bash", {"command": "ls"})]
    after = fork_history(load_trajectory(CLAUDE), 4)
    assert after[1].tool_calls is None and after[1].text.startswith("[Edit] {")
    assert after[2].role == "user" and after[2].text == "[Edit result]\nThe file has been updated."
    inspect_history = fork_history(load_trajectory(INSPECT_EVAL), 3)  # the recorded input, as it was sent
    assert inspect_history[-1].text == "(a note the solver added to this call only)"


def test_damaged_records_never_crash(tmp_path):
    broken = tmp_path / "rollout.jsonl"
    broken.write_text(CODEX.read_text().replace('"type": "function_call_output"', '"type": 7', 1))
    assert load_trajectory(broken).steps
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"schema_version": "ATIF-v1.6", "agent": {}, "steps": [1, {"source": "robot"}]}))
    record = summary(load_trajectory(odd))
    assert record["skipped"] == {"step that is int": 1, "step with source 'robot'": 1}
    not_steps = tmp_path / "bad.json"
    not_steps.write_text(json.dumps({"schema_version": "ATIF-v1.6", "steps": {}}))
    with pytest.raises(TrajectoryError, match="`steps` is dict, not a list"):
        load_trajectory(not_steps)


def test_tool_errors_reach_print_json_the_replay_and_the_export(tmp_path):
    """Inspect's `ToolCallError` and Claude Code's `is_error` (issue 43.8): in `--print --json`,
    in the output pane's status line, in the ATIF export (with a loss line: ATIF has no field
    for them) and back from it."""
    from swedeck.core.export.atif import to_atif
    from swedeck.core.replay.document import LoadedDocument
    from swedeck.core.replay.step_text import output_text
    from swedeck.core.trajectory.printer import step_record

    inspect = load_trajectory(AGENTS / "inspect" / "calc.json")
    [observation] = step_record(inspect, inspect.steps[1])["observations"]
    assert observation["tool_error"] == {"type": "unknown", "message": "calc.py: permission denied"}
    assert observation["label"] == "tool error (unknown)"
    assert "── tool error (unknown) ──\ncalc.py: permission denied" in output_text(LoadedDocument(inspect).step(2))
    exported = to_atif(inspect)
    assert any(loss.startswith("tool errors (ATIF has no field for them") for loss in exported.losses)
    written = tmp_path / "inspect.atif.json"
    written.write_text(json.dumps(exported.document))
    back = load_trajectory(written)
    assert step_record(back, back.steps[1])["observations"][0]["tool_error"] == observation["tool_error"]

    lines = [{"sessionId": "s", "uuid": "u1", "parentUuid": None, "type": "user",
              "message": {"role": "user", "content": "read it"}},
             {"sessionId": "s", "uuid": "a1", "parentUuid": "u1", "type": "assistant", "message": {
                 "id": "m1", "role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                                               "input": {"command": "cat nope"}}]}},
             {"sessionId": "s", "uuid": "r1", "parentUuid": "a1", "type": "user", "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "t1", "content": "cat: nope: No such file", "is_error": True}]}}]
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(line) + "\n" for line in lines))
    claude = load_trajectory(session)
    [observation] = step_record(claude, claude.steps[0])["observations"]
    assert observation["tool_error"] == {"type": None, "message": "cat: nope: No such file"}
    assert observation["label"] == "tool error"


def test_records_no_step_shows_are_counted_and_said(tmp_path):
    """Issue 43.9: an Inspect sample of tool messages with no model turn is counted, said and
    exported; a bare string in a Claude Code content list is its text; Claude Code's `isMeta`
    words are not the person's; a branch's label is words, not JSON."""
    from swedeck.core.export.share import export
    from swedeck.core.trajectory.fidelity import summary, summary_lines
    from swedeck.core.trajectory.printer import step_record

    document = json.loads((AGENTS / "inspect" / "calc.json").read_text())
    sample = document["samples"][0]
    sample["messages"] = [{"id": f"t{n}", "role": "tool", "tool_call_id": f"c{n}", "function": "bash",
                           "content": f"out {n}"} for n in range(11)]
    sample["events"] = []
    document["samples"] = [sample]
    path = tmp_path / "tools-only.json"
    path.write_text(json.dumps(document))
    tools_only = load_trajectory(path)
    record = summary(tools_only)
    assert not tools_only.steps and record["skipped"]["tool results before any model response (no step shows them)"] == 11
    lines = summary_lines(record)
    assert "what the model saw: recorded  (no steps: the run has no model response)" in lines
    exported = export(path, "atif")
    assert json.loads(exported.data)["steps"] and any("tool results that answer no call" in loss
                                                       for loss in exported.losses)

    def line(uuid, parent, kind, message, **more):
        return json.dumps({"sessionId": "s", "uuid": uuid, "parentUuid": parent, "type": kind, "message": message,
                           **more})

    session = tmp_path / "session.jsonl"
    session.write_text("\n".join([
        line("m0", None, "user", {"role": "user", "content": "Caveat: generated while running local commands."},
             isMeta=True),
        line("u1", "m0", "user", {"role": "user", "content": ["fix the bug", {"type": "text", "text": "please"}]}),
        line("a1", "u1", "assistant", {"id": "x1", "role": "assistant", "content": [
            "I will look.", {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}),
        line("r1", "a1", "user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "calc.py"}]}),
        line("m1", "r1", "user", {"role": "user", "content": "<local-command-stdout>ok</local-command-stdout>"},
             isMeta=True),
        line("a2", "r1", "assistant", {"id": "x2", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "cat calc.py"}}]}),
    ]) + "\n")
    claude = load_trajectory(session)
    task = next(m for m in claude.messages if m.message_type.value == "task")
    assert task.text == "fix the bug\nplease"
    assert claude.messages[claude.steps[0].message_index].text == "I will look."
    labels = [branch.label for branch in claude.fidelity.openable]
    assert labels == ["branch of 5 records, ending '<local-command-stdout>ok</local-command-stdout>'"]
    main = load_trajectory(f"{session}#m1")
    said = [o["label"] for o in step_record(main, main.steps[0])["observations"]]
    assert said == ["observation", "Claude Code's note (isMeta: not the person's words)"]
    branched = load_trajectory(f"{session}#a1")
    assert any(b.label.endswith("ending 'Bash: cat calc.py'") for b in branched.fidelity.openable)


def test_a_claude_code_session_reads_only_its_main_line_whole(tmp_path):
    """Issue 49: the records of subagent runs inside a session (sidechains: most of a large file)
    are read for their uuids only; the main line's records, and each branch's last one (its
    label), are the ones parsed whole. The result is the same as reading every record."""
    import bench.generate as generate
    from swedeck.core.trajectory.readers import claude_code

    path = generate.write_claude_code_with_sidechains(tmp_path / "s.jsonl", 600, 300, sidechains=40)
    parsed: list[int] = []
    real = claude_code.loads

    def counting(data):  # type: ignore[no-untyped-def]
        parsed.append(len(data))
        return real(data)

    claude_code.loads = counting
    try:
        trajectory = load_trajectory(path)
    finally:
        claude_code.loads = real
    total = path.stat().st_size
    main_records = 1 + 3 * len(trajectory.steps)
    assert len(trajectory.steps) == 180 and fidelity_branches(trajectory) == 40
    assert len(parsed) == main_records + 40  # the main line, and each sidechain's last record for its label
    assert sum(parsed) < 0.45 * total  # the sidechains' bytes were never parsed whole
    assert trajectory.steps[-1].actions[0].command and trajectory.messages[0].text.startswith("Fix the failing")


def fidelity_branches(trajectory) -> int:  # type: ignore[no-untyped-def]
    return summary(trajectory)["branches"]
