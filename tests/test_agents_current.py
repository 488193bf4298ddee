"""Issue 63: what the pinned agents write today is read whole. Each run here is the real CLI
(npm, pinned: `support.agent_clis`) against a scripted server the test starts; its files are
the fixtures, recorded once for the module, never written by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import swedeck_command
from support.agent_clis import RELEASES, agent_cli
from support.agent_runs import AgentRun, claude_with_subagent, codex_code_mode, codex_with_sub_agent
from swedeck.core.trajectory.fidelity import summary
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.output import answer_label


@pytest.fixture(scope="module", params=RELEASES)
def code_mode(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    """Codex in code mode, the newest and the previous pin (`agent_runs.codex_code_mode`)."""
    run = codex_code_mode(agent_cli("codex", request.param), tmp_path_factory.mktemp(f"codex-{request.param}"))
    assert any(tool.get("name") == "exec" for tool in run.requests[0]["tools"])  # code mode: the exec cell is offered
    return run


def test_the_commands_an_exec_cell_ran_are_its_steps_shell_commands(code_mode):
    trajectory = load_trajectory(code_mode.own)
    actions = trajectory.steps[0].actions
    assert actions[0].command.startswith("exec const a") and not actions[0].unknown["shell"]  # the cell's source
    ran = [(action.command, action.unknown.get("exit_code"), action.unknown.get("output")) for action in actions[1:]]
    assert ran == [("echo one; exit 3", 3, "one\n"), ("printf two", 0, "two")]
    figures = summary(trajectory)
    assert (figures["tool_calls"], figures["shell_commands"]) == (3, 2)
    printed = subprocess.run([*swedeck_command(), "replay", str(code_mode.own), "--print"], capture_output=True,
                             text=True, timeout=60).stdout
    assert "$ echo one; exit 3  (in the exec cell, exit 3)" in printed
    assert "tool calls: 3 (2 shell)" in printed


def test_rules_see_the_commands_inside_an_exec_cell(code_mode, tmp_path):
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(printf:*)"]}}))
    done = subprocess.run([*swedeck_command(), "rules", "dry-run", "--from", "claude", str(settings),
                           str(code_mode.own), "--json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    decided = json.loads(done.stdout)
    assert [(row["command"], row["decision"]) for row in decided["commands_list"]] == [
        ("echo one; exit 3", "ask"), ("printf two", "deny")]


def test_codex_s_tokens_reconcile_with_its_own_token_count(code_mode):
    """Issue 65.2: Codex counts its session's tokens (each `token_count`'s `total_token_usage`);
    the steps' usage, summed, is reconciled with its last count, in `--print --json`'s `cost`."""
    totals = [json.loads(line)["payload"]["info"]["total_token_usage"] for line in code_mode.own.read_text().splitlines()
              if '"token_count"' in line and '"total_token_usage"' in line]
    done = subprocess.run([*swedeck_command(), "replay", str(code_mode.own), "--print", "--json"], capture_output=True,
                          text=True, timeout=60)
    cost = json.loads(done.stdout.splitlines()[0])["cost"]
    assert cost["agent_tokens"] == {"source": "Codex's token_count total", "prompt_tokens": totals[-1]["input_tokens"],
                                    "completion_tokens": totals[-1]["output_tokens"]}
    assert cost["tokens"] == {key: cost["agent_tokens"][key] for key in ("prompt_tokens", "completion_tokens")}
    assert cost["token_reconciliation"] == "agrees"


def test_codex_s_own_context_is_not_the_person_s_words_and_the_task_is_theirs(code_mode):
    trajectory = load_trajectory(code_mode.own)
    messages = list(trajectory.messages)
    task = next(message for message in messages if message.message_type.value == "task")
    assert task.text == "run echo"
    context = next(message for message in messages if message.text.startswith("<environment_context>"))
    assert answer_label(context) == "Codex's context (not the person's words)"
    skills = next(message for message in messages if message.text.startswith("<skills_instructions>"))
    assert answer_label(skills) == "Codex's developer message (not the person's words)"


def test_step_one_is_rebuilt_as_codex_sent_it_its_instructions_once(code_mode):
    """The oracle is the request Codex sent: every message of its input, in order, by text
    (content parts joined by a line, as swedeck keeps them). The base instructions are the
    first message once; the rollout stores them as Codex wrote them before it dropped the lines
    about tools the call does not offer (docs/trajectory-format.md), so the sent text's lines
    are theirs, in order, less those."""
    trajectory = load_trajectory(code_mode.own)
    sent = [(item["role"], "\n".join(part.get("text", "") for part in item["content"]))
            for item in code_mode.requests[0]["input"] if item.get("type") == "message"]
    prompt = trajectory.messages[: trajectory.steps[0].prompt_end]
    rebuilt = [("developer" if message.role == "system" else message.role, message.text) for message in prompt]
    assert len(rebuilt) == len(sent) and rebuilt[1:] == sent[1:]
    stored, wire = rebuilt[0][1].splitlines(), sent[0][1].splitlines()
    assert stored[: len(wire) // 2] == wire[: len(wire) // 2] and len(stored) - len(wire) <= 3
    assert sum(message.text == rebuilt[0][1] for message in prompt) == 1


def test_every_codex_record_type_is_read_or_said_why(code_mode):
    trajectory = load_trajectory(code_mode.own)
    fidelity = summary(trajectory)
    assert fidelity["skipped"], fidelity
    assert set(fidelity["skipped"]) == set(fidelity["why"]), fidelity  # nothing counted without its reason
    assert trajectory.info.session["settings"]["model"] == "gpt-5.5"  # thread_settings_applied
    assert trajectory.info.raw["world_state"]["environments"]  # what the model was given
    usage = trajectory.steps[0].usage
    assert usage is not None and (usage.prompt_tokens, usage.cached_tokens) == (1200, 800)  # token_usage_record


@pytest.fixture(scope="module", params=RELEASES)
def claude_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    """Claude Code with a subagent, the newest and the previous pin (`agent_runs.claude_with_subagent`):
    its session file, with the attachments, request records and cost it writes today."""
    return claude_with_subagent(agent_cli("claude", request.param), tmp_path_factory.mktemp(f"claude-{request.param}"))


def test_every_claude_code_record_type_is_read_or_said_why(claude_run):
    claude_session = claude_run.own
    trajectory = load_trajectory(claude_session)
    fidelity = summary(trajectory)
    types = {json.loads(line).get("type") for line in claude_session.read_text().splitlines() if line.strip()}
    assert {"cost-state", "tools-used", "atis-latch", "queue-operation", "last-prompt", "attachment"} <= types
    assert set(fidelity["skipped"]) == set(fidelity["why"]), fidelity
    assert not any("name no parent" in note for note in fidelity["notes"])  # the chain runs through the attachments


def test_claude_code_s_own_cost_is_its_total(claude_run):
    claude_session = claude_run.own
    cost = next(json.loads(line) for line in claude_session.read_text().splitlines() if '"cost-state"' in line)
    fidelity = summary(load_trajectory(claude_session))
    assert fidelity["agent_total_usd"] == cost["totalCostUSD"] > 0
    printed = subprocess.run([*swedeck_command(), "replay", str(claude_session), "--print"], capture_output=True,
                             text=True, timeout=60).stdout
    assert f"the agent's own total: {cost['totalCostUSD']:.6f} USD: agrees" in printed


def test_claude_code_s_context_is_in_the_conversation_and_the_rebuild_is_its_request(claude_run):
    """The attachments Claude Code rendered into each request are messages of the main line,
    labelled as its context: the prompt rebuilt from the messages is the request its own
    api-request records give, within the few tokens of where its user-role context sits."""
    trajectory = load_trajectory(claude_run.own)
    messages = list(trajectory.messages)
    task = next(message for message in messages if message.message_type.value == "task")
    assert task.text == "write hello to out.txt"
    context = [message for message in messages if message.extra.unknown.get("agent_context")]
    assert any("# Environment" in message.text and message.role == "system" for message in context)
    assert all(answer_label(message).endswith("(not the person's words)") for message in context[1:])
    assert messages[0].role == "system" and "You are a Claude agent" in messages[0].text  # the snapshot's prompt
    figures = summary(trajectory)
    errors = figures["reconstruction_error_tokens"]
    assert len(errors) == len(trajectory.steps) and all(abs(error) <= 8 for error in errors.values()), errors
    # where the few tokens are, said by message: the person's words and Claude Code's reminder, one
    # message on the wire, two here
    (parts,) = figures["reconstruction_error_parts"].values()
    assert {(part["side"], part["text"][:20]) for part in parts} >= {
        ("transcript", "write hello to out.t"), ("request", "<system-reminder> At")}, parts


def test_a_disagreement_between_an_agent_s_records_and_the_wire_names_its_field_and_item():
    from swedeck.core.trajectory.wire_request import agreement

    sent = {"model": "m", "system": [{"type": "text", "text": "x-anthropic-billing-header: cc"},
                                     {"type": "text", "text": "You are Claude."}],
            "tools": [{"name": "Bash"}], "metadata": {"user_id": "u"}, "stream": True,
            "messages": [{"role": "user", "content": "go"},
                         {"role": "user", "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}]}]}
    rebuilt = {"model": "m", "system": sent["system"][1:], "tools": [{"name": "Bash"}], "messages": sent["messages"]}
    assert agreement(rebuilt, sent) == {"agrees": True, "same": ["system prompt but its billing block", "tools", "messages"],
                                        "differs": {"metadata": "the request's metadata", "stream": "whether it streamed"}}
    changed = {**rebuilt, "tools": [{"name": "Bash"}, {"name": "Read"}],
               "messages": [sent["messages"][0], {"role": "user", "content": "b"}]}
    found = agreement(changed, sent)
    assert not found["agrees"] and found["same"] == ["system prompt but its billing block"]
    assert found["differs"]["tools"] == "2 items in the records, 1 sent"
    assert found["differs"]["messages"] == "item 1: content"
    assert not agreement({**rebuilt, "model": "other"}, sent)["agrees"]  # a parameter the records give, not as sent


def test_the_version_matrix_codex_every_record_known_every_step_recorded_every_command_a_shell_command(code_mode):
    rollout = load_trajectory(code_mode.own)
    fidelity = summary(rollout)
    assert set(fidelity["skipped"]) == set(fidelity["why"]), fidelity
    record = load_trajectory(code_mode.record)
    assert len(record.steps) == len(rollout.steps) == len(code_mode.requests) == 2
    assert summary(record)["steps_by_provenance"] == {"recorded": 2}
    shell = [action.command for step in rollout.steps for action in step.actions if action.unknown.get("shell")]
    assert shell == ["echo one; exit 3", "printf two"]


def test_the_version_matrix_claude_code_every_record_known_every_step_recorded_every_command_a_shell_command(claude_run):
    session = load_trajectory(claude_run.own)
    fidelity = summary(session)
    assert set(fidelity["skipped"]) == set(fidelity["why"]), fidelity
    assert fidelity["steps_by_provenance"] == {"recorded": len(session.steps)}  # its own request records, or the record's
    record = load_trajectory(claude_run.record)
    main = [step for step in record.steps]
    assert len(main) == len(session.steps), (len(main), len(session.steps))
    calls = [action for step in session.steps for action in step.actions if action.unknown.get("tool") == "Bash"]
    assert calls and all(action.unknown.get("shell") for action in calls)


@pytest.mark.parametrize("agent, previous", [("claude-code", "2.1.328"), ("codex", "0.169.0")])
def test_the_drift_check_runs_a_version_against_the_pin_and_lists_what_it_writes_differently(agent, previous):
    """`python -m bench.drift AGENT VERSION`, here with the previous pin (installed by .ci/run)
    against the newest: the same scripted session with both, compared record type by record
    type. Between Claude Code 2.1.328 and 2.1.332 the request records gained two fields."""
    import os

    binary = "claude" if agent == "claude-code" else "codex"
    installed = Path(agent_cli(binary, "previous")).parent.parent.parent
    done = subprocess.run([sys.executable, "-m", "bench.drift", agent, previous, "--installed", str(installed), "--json"],
                          capture_output=True, text=True, timeout=300, cwd=Path(__file__).parent.parent,
                          env={**os.environ, "SWEDECK_AGENTS_DIR": str(Path(agent_cli(binary)).parent.parent.parent)})
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert (report["version"], report["against"]) == (previous, "2.1.332" if agent == "claude-code" else "0.171.0")
    assert report["unread"] == [] and report["types_new"] == [] == report["types_gone"]
    assert report["read"]["steps"] >= 2 and report["read"]["shell_commands"] >= 1
    if agent == "claude-code":
        assert report["fields_gone"]["api-request"] == ["echoWireToolInputs", "thread"]


@pytest.fixture(scope="module")
def paginated(tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    """Codex 0.171 with its paginated history (`background_paginated_rollout_migration`): the
    rollout's records numbered (`ordinal`), the thread kept in `thread_history_1.sqlite` too."""
    return codex_code_mode(agent_cli("codex"), tmp_path_factory.mktemp("codex-paginated"),
                           "features.background_paginated_rollout_migration=true")


def test_a_paginated_rollout_reads_whole_by_its_ordinals(paginated, tmp_path):
    trajectory = load_trajectory(paginated.own)
    assert trajectory.info.session["history_mode"] == "paginated"
    assert not trajectory.info.warnings and len(trajectory.steps) == 2
    lines = paginated.own.read_text().splitlines()
    gap = tmp_path / "gap.jsonl"  # three records taken out of the middle
    gap.write_text("\n".join(lines[:9] + lines[12:]) + "\n")
    assert load_trajectory(gap).info.warnings == ["records 9..11 of the thread are missing (by their ordinals)"]


def test_a_thread_in_codex_s_history_opens_and_a_rollout_cut_short_says_so(paginated, tmp_path):
    import shutil

    codex_home = paginated.own.parents[4]
    history = codex_home / "thread_history_1.sqlite"
    thread = load_trajectory(history)  # the thread as Codex's app keeps it
    assert thread.format == "codex-threads" and thread.info.session["id"] in paginated.own.name
    commands = [(action.command, thread.messages[index].extra.returncode)
                for step in thread.steps for action, index in zip(step.actions, step.observation_indices, strict=True)]
    assert commands == [("echo one; exit 3", 3), ("printf two", 0)]
    assert [message.text for message in thread.messages if message.role == "assistant"] == ["Let me look.", "Done it."]
    # the same home copied, its rollout cut as a migration that lost its tail leaves it
    copy = tmp_path / "codex-home"
    shutil.copytree(codex_home, copy, ignore=shutil.ignore_patterns("skills"))
    cut = copy / paginated.own.relative_to(codex_home)
    lines = cut.read_text().splitlines()
    cut.write_text("\n".join(lines[:12]) + "\n")
    warnings = load_trajectory(cut).info.warnings
    assert len(warnings) == 1 and warnings[0].startswith("cut short: Codex's thread history says its rollout reached "
                                                          f"record {len(lines) - 1:,}"), warnings
    assert not load_trajectory(paginated.own).info.warnings  # the whole one says nothing


def test_a_thread_whose_rollout_a_migration_lost_opens_from_the_history_and_says_so(paginated, tmp_path):
    import shutil
    import sqlite3

    codex_home = paginated.own.parents[4]
    copy = tmp_path / "codex-home"
    shutil.copytree(codex_home, copy, ignore=shutil.ignore_patterns("skills"))
    lost = copy / paginated.own.relative_to(codex_home)
    state = next(copy.glob("state_*.sqlite"))
    with sqlite3.connect(state) as database:  # the copy's state names the copy's rollout, then it is gone
        database.execute("UPDATE threads SET rollout_path = ?", (str(lost),))
    lost.unlink()
    thread = load_trajectory(copy / "thread_history_1.sqlite")
    assert f"the thread's rollout: {lost} (no longer there: this history is the only copy)" in thread.fidelity.notes
    assert len(thread.steps) == 2


def test_claude_code_s_cost_reconciles_with_its_own_total_subagents_included(claude_run):
    """Issue 65: each step's dollars from its usage and litellm's prices, the subagent's run
    (its own file) under its role, the whole against Claude Code's `cost-state`."""
    cost_state = next(json.loads(line) for line in claude_run.own.read_text().splitlines() if '"cost-state"' in line)
    done = subprocess.run([*swedeck_command(), "replay", str(claude_run.own), "--print", "--json"],
                          capture_output=True, text=True, timeout=60)
    first, *steps = [json.loads(line) for line in done.stdout.splitlines()]
    cost = first["cost"]
    assert cost["reconciliation"] == "agrees" and cost["agent_total_usd"] == cost_state["totalCostUSD"]
    assert abs(cost["total_usd"] - cost_state["totalCostUSD"]) < 1e-9
    assert set(cost["by_model"]) == set(cost_state["modelUsage"]) and not cost["unpriced"]
    (subagent,) = first["subagents"]
    assert cost["by_role"] == {"main": pytest.approx(sum(step["cost_usd"] for step in steps)),
                               f"subagent {subagent['id']}": pytest.approx(subagent["cost_usd"])}
    started = next(step for step in steps if any(action["command"].startswith("Agent ") for action in step["actions"]))
    assert subagent["parent_step"] == started["step"] and subagent["steps"] == 2
    assert Path(subagent["target"]).name == f"agent-{subagent['id']}.jsonl"
    # priced otherwise: the difference and its model said
    done = subprocess.run([*swedeck_command(), "replay", str(claude_run.own), "--print", "-c",
                           "model.prices.claude-opus-5-5.input=8", "-c", "model.prices.claude-opus-5-5.output=40"],
                          capture_output=True, text=True, timeout=60)
    assert "the agent's own total: " in done.stdout and "differs by +" in done.stdout
    assert "claude-opus-5-5: priced " in done.stdout and f"{cost_state['totalCostUSD']:.6f} by the agent" in done.stdout


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_the_replay_shows_each_steps_dollars_in_the_step_list_and_the_meter(claude_run):
    """Issue 65.3: the replay prices each step as its curve is read: a column of the step list
    and the meter's `this step · so far`, the same figures `--print --json` gives."""
    from support.waiting import wait_for
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.widgets.context_meter import ContextMeter

    done = subprocess.run([*swedeck_command(), "replay", str(claude_run.own), "--print", "--json"],
                          capture_output=True, text=True, timeout=60)
    steps = [json.loads(line) for line in done.stdout.splitlines()[1:]]
    app = ReplayApp([claude_run.own])
    async with app.run_test(size=(160, 48)) as pilot:
        screen = await wait_for(pilot, lambda: getattr(app.screen, "step_list", None) and app.screen)
        await wait_for(pilot, lambda: len(screen.costs) == len(steps))
        assert screen.step_list.costs == {step["step"]: pytest.approx(step["cost_usd"]) for step in steps}
        assert screen.step_list.label(1, 28).endswith(f"${steps[0]['cost_usd']:.4f}")
        meter = str(screen.query_one(ContextMeter).render())
        assert f"${steps[0]['cost_usd']:.4f} this step · ${steps[0]['cost_usd']:.4f} so far" in meter
        await pilot.press("l")
        so_far = steps[0]["cost_usd"] + steps[1]["cost_usd"]
        await wait_for(pilot, lambda: f"${so_far:.4f} so far" in str(screen.query_one(ContextMeter).render()))


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_the_subagent_tree_opens_each_subagent_in_place_and_c_jumps_to_it(claude_run):
    """Issue 65.4: `s` lists the main run and the subagent the real Claude Code started (its steps,
    tokens, dollars, the step whose call started it); Enter opens it in place with its own meter,
    `q` comes back; `c` on the step that started it opens it too."""
    from textual.widgets import Tree

    from support.waiting import wait_for
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.replay.subagent_screen import SubagentScreen
    from swedeck.tui.widgets.context_meter import ContextMeter

    done = subprocess.run([*swedeck_command(), "replay", str(claude_run.own), "--print", "--json"],
                          capture_output=True, text=True, timeout=60)
    (subagent,) = json.loads(done.stdout.splitlines()[0])["subagents"]
    app = ReplayApp([claude_run.own])
    async with app.run_test(size=(160, 48)) as pilot:
        main = await wait_for(pilot, lambda: getattr(app.screen, "step_list", None) and app.screen)
        await wait_for(pilot, lambda: main.document is not None and main.document.step_count > 1)
        await pilot.press("s")
        tree_screen = await wait_for(pilot, lambda: isinstance(app.screen, SubagentScreen) and app.screen.root
                                     and app.screen)
        (child,) = tree_screen.root.children
        assert (child.id, child.parent_step, child.steps) == (subagent["id"], subagent["parent_step"], subagent["steps"])
        assert child.cost_usd == pytest.approx(subagent["cost_usd"])
        tree = tree_screen.query_one(Tree)
        assert f"subagent {child.id}" in str(tree.root.children[0].label) and \
            f"(from step {child.parent_step})" in str(tree.root.children[0].label)
        tree.move_cursor(tree.root.children[0])
        await pilot.press("enter")
        opened = await wait_for(pilot, lambda: app.screen is not main and getattr(app.screen, "step_list", None)
                                and app.screen)
        assert opened.path.name == Path(subagent["target"]).name
        await wait_for(pilot, lambda: "this step" in str(opened.query_one(ContextMeter).render()))
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is main)
        main.go(child.parent_step)
        await pilot.press("c")
        child_screen = await wait_for(pilot, lambda: app.screen is not main and getattr(app.screen, "path", None)
                                      and app.screen)
        assert child_screen.path.name == Path(subagent["target"]).name
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is main and main.step == child.parent_step)
        other = next(step for step in range(1, main.step_count + 1) if step != child.parent_step)
        main.go(other)
        await pilot.press("c")  # a step that started none: it says so, nothing opens
        await wait_for(pilot, lambda: any("started no subagent" in str(n.message) for n in app._notifications))
        assert app.screen is main


def test_a_model_without_a_price_is_named_never_summed_as_zero():
    from swedeck.core.cost import Call, Prices, account, reconcile
    from swedeck.core.messages import Usage

    usage = Usage(prompt_tokens=1000, completion_tokens=100, cached_tokens=400, cache_write_tokens=100)
    report = account([Call("main", "gpt-4o", usage, 1), Call("main", "no-such-model-x", usage, 2),
                      Call("side calls", "gpt-4o", None)], Prices())
    assert report.unpriced == {"no-such-model-x": 1} and report.steps.get(2) is None and report.without_usage == 1
    # gpt-4o in the pinned map: input 2.5e-06, output 1e-05, cache read 1.25e-06, no cache write price (input's)
    assert report.by_kind == pytest.approx({"input": 500 * 2.5e-6, "cache_read": 400 * 1.25e-6,
                                            "cache_write": 100 * 2.5e-6, "output": 100 * 1e-5})
    assert report.total_usd == pytest.approx(report.steps[1])
    report.agent_total_usd = report.total_usd
    assert reconcile(report).startswith("differs by +0.000000 USD: no price for no-such-model-x")
    priced = account([Call("main", "no-such-model-x", usage, 1)], Prices({"no-such-model-x": {"input": 1, "output": 2}}))
    assert priced.total_usd == pytest.approx((1000 * 1 + 100 * 2) / 1e6) and not priced.unpriced


def test_the_facts_a_claude_code_plan_keeps_are_what_its_built_steps_say(claude_run):
    """Issue 61.14: the summary and the cost read each step's model, usage and calls from the
    plan's columns (a million records summed without building a step); on the real Claude Code's
    files, main line and subagent, they are what the steps built from the records say."""
    from swedeck.core.cost import Prices, cost_of

    for path in [claude_run.own, *sorted(claude_run.own.with_suffix("").glob("subagents/*.jsonl"))]:
        trajectory = load_trajectory(path)
        assert trajectory.step_facts() is not None and len(trajectory.steps) > 0
        fast = summary(trajectory), cost_of(trajectory, Prices({}))
        trajectory.facts = None
        assert (summary(trajectory), cost_of(trajectory, Prices({}))) == fast
        if path == claude_run.own:
            assert fast[0]["shell_commands"] > 0 and fast[1].total_usd > 0


def _replayed_live(record: Path, live: Path, until: int) -> tuple[Any, list[tuple[str, Any]]]:
    """The record `swedeck record` made of the real run, written again as it was written live
    (`.traj.jsonl`) up to exchange `until`; the rest, in order, to write later."""
    from swedeck.core.messages import Message
    from swedeck.core.trajectory.writer import TrajectoryWriter

    document = json.loads(record.read_text())
    parts: list[tuple[str, Any]] = []
    messages = document["messages"]
    written = 0
    for event in document["meta_events"]:
        if event.get("event") != "exchange":
            continue
        while written < event["message_count"]:
            parts.append(("message", Message.from_record(messages[written])))
            written += 1
        parts.append(("exchange", {k: v for k, v in event.items() if k not in ("role", "event", "message_count", "time")}))
    parts += [("message", Message.from_record(message)) for message in messages[written:]]
    writer = TrajectoryWriter(live, {"id": "live", "config": {}})
    cut = next(n for n, (kind, data) in enumerate(parts) if kind == "exchange" and data["number"] == until) + 1
    for kind, data in parts[:cut]:
        writer.add_message(data) if kind == "message" else writer.add_exchange("exchange", data)
    return writer, parts[cut:]


def test_a_record_keeps_each_subagent_as_a_run_of_its_own(claude_run):
    """Issue 65.4 under `record`: the subagent's calls are its own run in the record (not side
    calls): `--print --json` lists it with the main-line step whose `Agent` call asked for it, its
    steps and dollars; it opens as `REC#subagent-ID`, every step's prompt its request; the record's
    own usage still agrees with the sum."""
    done = subprocess.run([*swedeck_command(), "replay", str(claude_run.record), "--print", "--json"],
                          capture_output=True, text=True, timeout=60)
    first, *steps = [json.loads(line) for line in done.stdout.splitlines()]
    (subagent,) = first["subagents"]
    asked = next(step for step in steps if any(action["command"].startswith("Agent ") for action in step["actions"]))
    assert (subagent["id"], subagent["parent_step"], subagent["steps"]) == ("1", asked["step"], 2), subagent
    assert subagent["target"] == f"{claude_run.record}#subagent-1"
    assert first["cost"]["by_role"]["subagent 1"] == pytest.approx(subagent["cost_usd"]) and subagent["cost_usd"] > 0
    assert first["cost"]["token_reconciliation"] == "agrees"  # every call counted once: main, subagent, side
    run = load_trajectory(subagent["target"])
    assert [step.commands for step in run.steps] == [["ls"], []]
    assert all(run.recorded_prompts[number] for number in (1, 2))
    assert any("list the files" in message.text for message in run.recorded_prompts[1] if message.role == "user")


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_subagent_appears_in_the_live_record_when_it_starts(claude_run, tmp_path):
    """Issue 65.4, live: following a record as it is written, `s` lists the subagent once its first
    call is in, with that one step, and its second once that is."""
    from support.waiting import wait_for
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.replay.subagent_screen import SubagentScreen

    events = json.loads(claude_run.record.read_text())["meta_events"]
    first_call = next(event["number"] for event in events if event.get("line") == "subagent")
    writer, rest = _replayed_live(claude_run.record, tmp_path / "live", first_call - 1)
    app = ReplayApp([writer.path], follow=True)
    async with app.run_test(size=(160, 48)) as pilot:
        main = await wait_for(pilot, lambda: getattr(app.screen, "step_list", None) and app.screen)
        await pilot.press("s")
        tree = await wait_for(pilot, lambda: isinstance(app.screen, SubagentScreen) and app.screen.root
                              and app.screen)
        assert not tree.root.children  # none started yet
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is main)
        kind, data = rest.pop(0)
        while kind != "exchange" or data["number"] != first_call:
            writer.add_message(data) if kind == "message" else None
            kind, data = rest.pop(0)
        writer.add_exchange("exchange", data)
        await wait_for(pilot, lambda: any(event.data.get("line") == "subagent"
                                          for event in main.document.trajectory().meta_events), timeout=15)
        await pilot.press("s")
        tree = await wait_for(pilot, lambda: isinstance(app.screen, SubagentScreen) and app.screen.root
                              and app.screen)
        (child,) = tree.root.children
        assert (child.id, child.steps) == ("1", 1)
        await pilot.press("q")
        for kind, data in rest:
            writer.add_message(data) if kind == "message" else writer.add_exchange("exchange", data)
        await wait_for(pilot, lambda: sum(event.data.get("line") == "subagent"
                                          for event in main.document.trajectory().meta_events) == 2, timeout=15)
        await pilot.press("s")
        tree = await wait_for(pilot, lambda: isinstance(app.screen, SubagentScreen) and app.screen.root
                              and app.screen)
        assert [(child.id, child.steps) for child in tree.root.children] == [("1", 2)]
    writer.close()


@pytest.fixture(scope="module", params=RELEASES)
def codex_sub_agent(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> AgentRun:
    """The real Codex (newest and previous pin) spawning a sub-agent (`agent_runs.codex_with_sub_agent`)."""
    return codex_with_sub_agent(agent_cli("codex", request.param), tmp_path_factory.mktemp(f"codex-sub-{request.param}"))


def test_a_codex_sub_agent_is_a_node_of_the_tree_linked_to_the_call_that_spawned_it(codex_sub_agent):
    """Issue 65.4, Codex: the sub-agent `spawn_agent` started (its own rollout, whose `session_meta`
    names the root's thread) is a node of the root's tree, from the step whose call spawned it
    (the root's `SubAgentActivity`), with its steps; its task is its parent's words; the tokens
    reconcile with Codex's own counts, each thread's its own `token_count` total."""
    from swedeck.core.cost import Prices
    from swedeck.core.subagents import subagent_tree

    done = subprocess.run([*swedeck_command(), "replay", str(codex_sub_agent.own), "--print", "--json"],
                          capture_output=True, text=True, timeout=60)
    first, *steps = [json.loads(line) for line in done.stdout.splitlines()]
    (sub,) = first["subagents"]
    spawned = next(step for step in steps if any(action["command"].startswith("spawn_agent")
                                                 for action in step["actions"]))
    assert (sub["id"], sub["parent_step"], sub["steps"]) == ("lister", spawned["step"], 2), sub
    assert first["cost"]["token_reconciliation"] == "agrees", first["cost"]
    child = load_trajectory(sub["target"])
    assert child.messages[[m.message_type.value for m in child.messages].index("task")].text.endswith(
        "list the files in this folder")
    assert [step.commands for step in child.steps][0] == ["ls"]
    root = subagent_tree(load_trajectory(codex_sub_agent.own), Prices({}))
    assert [(node.id, node.parent_step, node.steps) for node in root.children] == [("lister", spawned["step"], 2)]
    # swedeck's own record of the same run places the sub-agent's calls as its run too
    recorded = json.loads(subprocess.run([*swedeck_command(), "replay", str(codex_sub_agent.record), "--print",
                                          "--json"], capture_output=True, text=True, timeout=60).stdout.splitlines()[0])
    assert [(item["steps"], item["parent_step"]) for item in recorded["subagents"]] == [(2, 1)], recorded["subagents"]
