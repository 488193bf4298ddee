"""Our readers of other agents' records against the owners' own code (SPEC §9.3):

- Harbor's ATIF pydantic models and validator (`harbor`) on every ATIF file we read;
- Inspect's `read_eval_log` on our Inspect fixtures, and on logs Inspect itself writes here,
  in a real (offline) eval run with its `mockllm` model and a tool;
- `claude-code-log`, an independent parser of Claude Code sessions, on our Claude Code files.

OpenHands' SDK needs Python >= 3.12 (this project runs 3.11): its files are checked against
the documented event schema only (docs/trajectory-format.md). `.ci/run` installs the owners'
packages and sets SWEDECK_REQUIRE_ORACLES, so there a missing one fails; elsewhere it skips.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from swedeck.core.trajectory.fidelity import summary
from swedeck.core.trajectory.loader import load_trajectory

AGENTS = Path(__file__).parent / "fixtures" / "agents"
ATIF_FILES = sorted([*AGENTS.glob("atif/*.json"), *AGENTS.glob("harbor-job/*/agent/trajectory.json")])


def oracle(module: str):
    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("SWEDECK_REQUIRE_ORACLES"):
            pytest.fail(f"{module} is not installed: .ci/run installs the owners' readers")
        pytest.skip(f"{module} is not installed (pip install '.[test]'; harbor: see .ci/run)")


@pytest.mark.parametrize("path", ATIF_FILES, ids=lambda p: str(p.relative_to(AGENTS)))
def test_atif_files_agree_with_harbors_models(path):
    models = oracle("harbor.models.trajectories")
    validator = oracle("harbor.utils.trajectory_validator")
    document = json.loads(path.read_text())
    checker = validator.TrajectoryValidator()
    assert checker.validate(document), checker.get_errors()
    theirs = models.Trajectory.model_validate(document)
    ours = load_trajectory(path)
    agent_steps = [step for step in theirs.steps if step.source == "agent"]
    assert len(ours.steps) == len(agent_steps)
    for step, their in zip(ours.steps, agent_steps, strict=True):
        assert [action.tool_call_id for action in step.actions] == [call.tool_call_id for call in their.tool_calls or []]
        results = their.observation.results if their.observation else []
        assert len(step.observation_indices) == len(results)
        metrics = their.metrics
        assert (step.usage.prompt_tokens if step.usage else None) == (metrics.prompt_tokens if metrics else None)
        assert (step.cost if step.cost is not None else None) == (metrics.cost_usd if metrics else None)
    if theirs.final_metrics and theirs.final_metrics.total_prompt_tokens is not None:
        assert ours.info.model_stats.prompt_tokens == theirs.final_metrics.total_prompt_tokens


def _text(message) -> str:
    """A message's text as we show it: a failed tool call's error where it has no output
    (docs/trajectory-format.md: Inspect keeps the error beside an empty content)."""
    error = getattr(message, "error", None)
    return message.text or (error.message if error else "")


def _compare_inspect(path: Path, log) -> None:
    for number, sample in enumerate(log.samples, start=1):
        ours = load_trajectory(f"{path}#{number}")
        assistants = [message for message in sample.messages if message.role == "assistant"]
        assert len(ours.steps) == len(assistants)
        tool_messages = [message for message in sample.messages if message.role == "tool"]
        our_outputs = [message for message in ours.messages if message.role == "tool"]  # a sample may hold no call
        assert [m.tool_call_id for m in our_outputs] == [m.tool_call_id for m in tool_messages]
        assert [m.text for m in our_outputs] == [_text(m) for m in tool_messages]
        for step, message in zip(ours.steps, assistants, strict=True):
            assert [a.tool_call_id for a in step.actions] == [call.id for call in message.tool_calls or []]
            answered = {ours.messages[i].tool_call_id for i in step.observation_indices if ours.messages[i].role == "tool"}
            assert answered <= {a.tool_call_id for a in step.actions}
        # A model event belongs to the assistant message its output is (by id); logs written
        # before messages had ids leave both None, and then nothing ties them together.
        models = {event.output.choices[0].message.id: event for event in sample.events
                  if event.event == "model" and event.output.choices and event.output.choices[0].message.id}
        for number_, (step, message) in enumerate(zip(ours.steps, assistants, strict=True), start=1):
            event = models.get(message.id) if message.id else None
            if event is None:
                assert number_ not in ours.recorded_prompts
                continue
            usage = event.output.usage
            if usage is None:
                assert step.usage is None or step.usage.estimated
            else:
                expected = usage.input_tokens + (usage.input_tokens_cache_read or 0) + (usage.input_tokens_cache_write or 0)
                assert step.usage.prompt_tokens == expected and step.usage.completion_tokens == usage.output_tokens
            recorded = ours.recorded_prompts[number_]  # the exact input, input_refs resolved as Inspect does
            assert [(m.role, m.text) for m in recorded] == [(m.role, _text(m)) for m in event.input]


@pytest.mark.parametrize("name", ["calc.json", "calc.eval"])
def test_our_inspect_fixtures_agree_with_read_eval_log(name):
    log_module = oracle("inspect_ai.log")
    path = AGENTS / "inspect" / name
    _compare_inspect(path, log_module.read_eval_log(str(path), resolve_attachments=True))


_RUN_INSPECT = textwrap.dedent('''
    import importlib.util, os, sys, tiktoken
    # Inspect counts tokens with o200k_base, which tiktoken would download; this machine is offline
    # and only ships cl100k_base (with litellm): the count does not change what the log records.
    litellm = importlib.util.find_spec("litellm").submodule_search_locations[0]
    os.environ["TIKTOKEN_CACHE_DIR"] = os.path.join(litellm, "litellm_core_utils", "tokenizers")
    get_encoding = tiktoken.get_encoding
    tiktoken.get_encoding = lambda name: get_encoding("cl100k_base")
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, system_message, use_tools
    from inspect_ai.tool import tool

    @tool
    def bash():
        async def execute(cmd: str):
            """Run a command.

            Args:
              cmd: the command
            """
            return f"ran: {cmd}"
        return execute

    outputs = [ModelOutput.for_tool_call("mockllm/model", "bash", {"cmd": "ls -la"}),
               ModelOutput.for_tool_call("mockllm/model", "bash", {"cmd": "cat a.py"}),
               ModelOutput.from_content("mockllm/model", "The answer is 42")]
    task = Task(dataset=[Sample(input="What is the answer? " + "context " * 400, target="42", id="s1")],
                solver=[system_message("You are helpful."), use_tools(bash()), generate()], scorer=includes())
    inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=sys.argv[1],
                 log_format=sys.argv[2], display="none")
''')


def _inspect_writes(log_module, tmp_path: Path, script_text: str, log_format: str, *args: str):
    """Inspect itself runs `script_text` offline and writes a log; the log, read by our reader and
    by Inspect's own (`_compare_inspect`), which must agree."""
    script = tmp_path / "run_inspect.py"
    script.write_text(script_text)
    result = subprocess.run([sys.executable, str(script), str(tmp_path / "logs"), log_format, *args],
                            capture_output=True, text=True, timeout=240, cwd=tmp_path,
                            env={**os.environ, "INSPECT_LOG_LEVEL": "warning"})
    assert result.returncode == 0, result.stderr[-2000:]
    [path] = list((tmp_path / "logs").glob(f"*.{log_format}"))
    log = log_module.read_eval_log(str(path), resolve_attachments=True)
    assert log.status == "success"
    _compare_inspect(path, log)
    return path, log


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_logs_inspect_writes_agree_with_read_eval_log(tmp_path, log_format):
    log_module = oracle("inspect_ai.log")
    path, log = _inspect_writes(log_module, tmp_path, _RUN_INSPECT, log_format)
    ours = load_trajectory(path)
    assert [step.commands for step in ours.steps] == [["ls -la"], ["cat a.py"], []]
    assert summary(ours)["steps_by_provenance"] == {"recorded": 3}
    assert ours.info.exit_status == "scored: includes=C"


_RUN_INSPECT_COMPACTING = _RUN_INSPECT.split("@tool")[0].replace(
    "from inspect_ai.solver import generate, system_message, use_tools",
    "from inspect_ai.agent import react\nfrom inspect_ai.model import CompactionSummary, CompactionTrim") + textwrap.dedent('''
    @tool
    def bash():
        async def execute(cmd: str):
            """Run a command.

            Args:
              cmd: the command
            """
            return f"ran: {cmd}\\n" + "line of output\\n" * 60
        return execute

    outputs = [ModelOutput.for_tool_call("mockllm/model", "bash", {"cmd": f"cat file{i}.py"}) for i in range(4)]
    outputs.append(ModelOutput.for_tool_call("mockllm/model", "submit", {"answer": "42"}))
    summarizer = get_model("mockllm/model", custom_outputs=[ModelOutput.from_content("mockllm/model", "Read 0-2.")] * 5)
    strategy = (CompactionSummary(threshold=600, memory=False, model=summarizer) if sys.argv[3] == "summary"
                else CompactionTrim(threshold=1000, memory=False))
    task = Task(dataset=[Sample(input="What is the answer?", target="42", id="s1")],
                solver=react(tools=[bash()], compaction=strategy), scorer=includes())
    inspect_eval(task, model=get_model("mockllm/model", custom_outputs=outputs), log_dir=sys.argv[1],
                 log_format=sys.argv[2], display="none")
''')


@pytest.mark.parametrize("kind,log_format", [("summary", "json"), ("trim", "eval")])
def test_inspect_compactions_are_compactions(tmp_path, kind, log_format):
    """Logs Inspect itself writes with `CompactionSummary` / `CompactionTrim` (issue 43.7): each
    `CompactionEvent` is a compaction of the step model (never "the person said"), with Inspect's
    token figures; after a summary, the prompt swedeck rebuilds (what an export keeps) is the
    input Inspect recorded, message for message."""
    from swedeck.core.export.atif import to_atif
    from swedeck.core.messages import MessageType
    from swedeck.core.prompt_view import history_before
    from swedeck.core.trajectory.fidelity import fidelity_of

    log_module = oracle("inspect_ai.log")
    path, log = _inspect_writes(log_module, tmp_path, _RUN_INSPECT_COMPACTING, log_format, kind)
    events = [event for event in log.samples[0].events if event.event == "compaction"]
    assert events and all(event.type == kind for event in events)
    ours = load_trajectory(path)
    markers = [m for m in ours.messages if m.message_type == MessageType.COMPACTION]
    assert fidelity_of(ours).compactions == len(events) == len(markers)
    assert [(m.extra.tokens_before, m.extra.tokens_after) for m in markers] == [
        (event.tokens_before, event.tokens_after) for event in events]
    assert not any(m.message_type == MessageType.USER_MESSAGE for m in ours.messages)
    rebuilt = ours.__class__(**{**{f: getattr(ours, f) for f in ours.__struct_fields__}, "recorded_prompts": {}})
    sent = {number: [(m.role, m.text) for m in ours.recorded_prompts[number]] for number in range(1, len(ours.steps) + 1)}
    for number, recorded in sent.items():
        assert [(m.role, m.text) for m in history_before(rebuilt, number)] == recorded, number
    # issue 62: swedeck's ATIF export, re-read, rebuilds the same requests (a trim's and a summary's)
    exported = tmp_path / "export.json"
    exported.write_text(json.dumps(to_atif(ours).document))
    again = load_trajectory(exported)
    assert len(again.steps) == len(ours.steps) and not again.recorded_prompts
    for number, recorded in sent.items():
        assert [(m.role, m.text) for m in history_before(again, number)] == recorded, number
    assert [(m.extra.tokens_before, m.extra.tokens_after) for m in again.messages
            if m.message_type == MessageType.COMPACTION] == [(e.tokens_before, e.tokens_after) for e in events]


def test_claude_code_agrees_with_claude_code_log():
    _compare_claude(AGENTS / "claude-code" / "cc-session-1.jsonl")


def test_an_unlinked_claude_code_session_agrees_with_claude_code_log(tmp_path):
    from test_other_agents import write_unlinked_session

    _compare_claude(write_unlinked_session(tmp_path / "s.jsonl"))


def _compare_claude(path: Path) -> None:
    converter = oracle("claude_code_log.converter")
    entries = converter.load_transcript(path, silent=True)
    ours = load_trajectory(path)
    chain = set()  # the records on our main line (a step keeps the uuids of all its lines)
    for extra in (message.extra.unknown for message in ours.messages):
        chain.update(extra.get("uuids") or [extra.get("uuid")])
    on_line = [entry for entry in entries if getattr(entry, "uuid", None) in chain]
    theirs_calls = [item.id for entry in on_line if entry.type == "assistant"
                    for item in entry.message.content if type(item).__name__ == "ToolUseContent"]
    assert [action.tool_call_id for step in ours.steps for action in step.actions] == theirs_calls
    theirs_results = [item.tool_use_id for entry in on_line if entry.type == "user" and not isinstance(entry.message.content, str)
                      for item in entry.message.content if type(item).__name__ == "ToolResultContent"]
    assert [ours.messages[i].tool_call_id for step in ours.steps for i in step.observation_indices
            if ours.messages[i].role == "tool"] == theirs_results
    responses = {entry.message.id for entry in on_line if entry.type == "assistant"}
    assert len(ours.steps) == len(responses)
    their_usage = {entry.message.id: entry.message.usage for entry in on_line if entry.type == "assistant"}
    last = [their_usage[entry.message.id] for entry in on_line if entry.type == "assistant"][-1]
    if last is not None:
        assert ours.steps[-1].usage.completion_tokens == last.output_tokens
        assert ours.steps[-1].usage.cached_tokens == (last.cache_read_input_tokens or 0)

def _corpus() -> list[Path]:
    """Every other agent's file we have whose owner has a reader here: our own fixtures, and
    the public samples among the peers' files (SWEDECK_PEER_FIXTURES, searched whole, kept
    outside the repository: docs/trajectory-format.md, "Conformance corpus")."""
    from swedeck.core.trajectory.loader import TRAJECTORY_SUFFIXES, trajectory_files

    ours = [path for path in trajectory_files(AGENTS) if path.parts[len(AGENTS.parts)] in OWNED]
    folder = os.environ.get("SWEDECK_PEER_FIXTURES")
    if not folder or not Path(folder).is_dir():
        return ours
    return ours + [path for path in trajectory_files(Path(folder)) if not path.name.endswith(TRAJECTORY_SUFFIXES)]


OWNED = ("inspect", "claude-code", "atif", "harbor-job")
"""Our fixture folders of the formats whose owner's reader (or an independent one) is installed."""
CORPUS = _corpus()


@pytest.mark.parametrize("path", CORPUS, ids=lambda path: path.name)
def test_records_agree_with_their_owners(path):
    """Each file of another agent reads as its owner's reader reads it: Inspect logs against
    `read_eval_log`, Claude Code sessions against claude-code-log, ATIF against Harbor."""
    from swedeck.core.trajectory.errors import TrajectoryError

    if path.suffix == ".eval" or (path.suffix == ".json" and b'"eval"' in path.read_bytes()[:4096]):
        log = oracle("inspect_ai.log").read_eval_log(str(path), resolve_attachments=True)
        if not log.samples:
            with pytest.raises(TrajectoryError, match="no samples"):
                load_trajectory(path)
            return
        assert summary(load_trajectory(path))["units"] == len(log.samples)
        _compare_inspect(path, log)
        return
    ours = load_trajectory(path)
    if ours.format == "claude-code":
        _compare_claude(path)
    elif ours.format == "atif":
        test_atif_files_agree_with_harbors_models(path)
    else:
        pytest.fail(f"{path}: {ours.format} has no owner's reader here to compare with (docs/trajectory-format.md)")


def harbors_swe_agent_converter():
    """Harbor's own `convert_swe_agent_to_atif`, run as it is: its module declares Python 3.12
    (`typing.override`, pydantic's TypedDicts), so the function alone is taken from Harbor's
    installed source and run over Harbor's own ATIF models (`harbor.models.trajectories`)."""
    import ast
    import datetime
    import importlib.util
    from typing import Any

    models = oracle("harbor.models.trajectories")
    spec = importlib.util.find_spec("harbor")
    assert spec is not None and spec.submodule_search_locations
    source = Path(spec.submodule_search_locations[0], "agents", "installed", "swe_agent.py").read_text()
    function = next(node for node in ast.parse(source).body
                    if isinstance(node, ast.FunctionDef) and node.name == "convert_swe_agent_to_atif")
    namespace: dict[str, Any] = {"Any": Any, "datetime": datetime.datetime, "timezone": datetime.timezone,
                                 **{name: getattr(models, name) for name in dir(models) if not name.startswith("_")}}
    exec(compile(ast.Module([function], []), "harbor/agents/installed/swe_agent.py", "exec"), namespace)
    return namespace["convert_swe_agent_to_atif"]


@pytest.mark.parametrize("path", sorted((Path(__file__).parent / "fixtures").glob("sweagent-*.traj")),
                         ids=lambda path: path.name)
def test_a_swe_agent_thought_goes_to_atif_where_harbors_converter_puts_it(path, tmp_path):
    """Issue 62: SWE-agent text-format thoughts gained the command after an ATIF round trip (0 of
    21 agreed). Harbor's own converter (`convert_swe_agent_to_atif`) puts the thought in
    `reasoning_content` and the raw response in `message`: swedeck's export does the same, and
    its reading back gives every step its thought again."""
    import subprocess

    from conftest import swedeck_command
    from swedeck.core.trajectory.printer import thought

    try:
        theirs = harbors_swe_agent_converter()(json.loads(path.read_text()), "s").model_dump(mode="json")
    except ValueError:  # pydantic's: Harbor's converter takes `trajectory` steps only (this file keeps its history)
        theirs = None
    out = tmp_path / "atif.json"
    done = subprocess.run([*swedeck_command(), "export", str(path), "-o", str(out), "--format", "atif"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    ours = json.loads(out.read_text())
    reasoning = [step.get("reasoning_content") for step in ours["steps"] if step["source"] == "agent"]
    if theirs is not None:
        harbors = [step.get("reasoning_content") for step in theirs["steps"] if step["source"] == "agent"]
        assert reasoning == harbors[-len(reasoning):], (reasoning, harbors)  # Harbor's has no demonstrations to skip
    original, again = load_trajectory(path), load_trajectory(out)
    assert [thought(original, step) for step in original.steps] == [thought(again, step) for step in again.steps]


def test_an_inspect_samples_tokens_reconcile_with_its_model_usage(tmp_path):
    """Issue 65.2: Inspect counts each sample's tokens (`model_usage`, every model call in it);
    the sum of the steps' usage, as swedeck reads them, is reconciled with that count."""
    from swedeck.core.cost import Prices, cost_of

    log_module = oracle("inspect_ai.log")
    path, log = _inspect_writes(log_module, tmp_path, _RUN_INSPECT, "eval")
    usage = log.samples[0].model_usage
    theirs = sum(u.input_tokens + (u.input_tokens_cache_read or 0) + (u.input_tokens_cache_write or 0)
                 for u in usage.values())
    report = cost_of(load_trajectory(path), Prices())
    assert report.agent_tokens["source"] == "Inspect's model_usage"
    assert report.agent_tokens["prompt_tokens"] == theirs > 0
    assert report.agent_tokens["completion_tokens"] == sum(u.output_tokens for u in usage.values())
    assert report.token_reconciliation == "agrees", (report.tokens, report.agent_tokens)
