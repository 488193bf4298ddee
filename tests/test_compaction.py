"""Compaction by summary (SPEC §17, issue 31), through real sessions against the scripted
server with a small window. The server counts prompts as a provider does: its own count of
the whole request body plus the tools' overhead, not swedeck's. Checked: the requests the
server received after a compaction are the ones `swedeck prompt` rebuilds from the file;
the meter's prediction of the next prompt after a compaction is within 5% of what the
server then reports; undo gives back the earlier prefix byte for byte; a summary call that
fails (429s, a cut stream) leaves the history untouched and says so."""

from __future__ import annotations

import json
import subprocess

from test_prompt_rebuild import as_litellm_sends_to_openai

from conftest import swedeck_command
from support.driver import Driver, make_config, run_session
from support.openai_server import Turn, Usage, model_config
from support.reliability import SUBMIT
from swedeck.core import events as ev
from swedeck.core.messages import MessageType
from swedeck.core.prompt_view import step_prompt
from swedeck.core.tokens import count_text
from swedeck.core.trajectory.compaction import compaction_problems
from swedeck.core.trajectory.loader import load_trajectory

WINDOW = 6000
TOOLS_OVERHEAD = 180
SUMMARY = "Summary: printed the numbers 1..300 four times; nothing failed; next: submit."


def provider_count(body: dict) -> int:
    """A provider's prompt tokens: its count of the request as it sees it (JSON, keys and all)."""
    return count_text(json.dumps(body["messages"])) + (TOOLS_OVERHEAD if body.get("tools") else 0)


def is_summary_request(body: dict) -> bool:
    return not body.get("tools") and "The conversation to summarize" in json.dumps(body["messages"])


def steps_in(body: dict) -> int:
    return sum(1 for message in body["messages"] if message["role"] == "assistant")


def scripted(steps_before_submit: int = 6, summary: Turn | None = None):
    """Step k prints 300 numbers; then submits. Summaries are answered with `summary`."""
    answered = []

    def answer(body: dict) -> Turn:
        usage = Usage(provider_count(body), 30)
        if is_summary_request(body):
            return summary if summary is not None else Turn(text=SUMMARY, usage=usage)
        if provider_count(body) > WINDOW:
            return Turn.context_exceeded()
        answered.append(body)
        if len(answered) > steps_before_submit:
            return Turn.bash_tool(SUBMIT, usage=usage)
        return Turn.bash_tool(f"seq {len(answered)} {len(answered) + 299}", usage=usage)
    return answer


def config_for(server, tmp_path, **summarize):
    model = model_config(server, context_window=WINDOW)
    config = make_config(tmp_path, model, agent__mode="yolo", agent__step_limit=12)
    config.agent.history_processors = [{"type": "summarize", "at": 0.5, "keep_last": 1, **summarize}]
    return config


def step_requests(server) -> list[dict]:
    return [body for body in server.requests if not is_summary_request(body)]


def test_a_compaction_is_recorded_and_every_request_after_it_is_rebuilt(openai_server, tmp_path):
    openai_server.respond(scripted())
    driver = Driver()
    result = run_session(config_for(openai_server, tmp_path), "print numbers", driver, interactive=False)
    assert result.exit_status == "Submitted", result.message
    summaries = [body for body in openai_server.requests if is_summary_request(body)]
    assert len(summaries) >= 1 and "max_tokens" in summaries[0] and "tools" not in summaries[0]
    path = tmp_path / "session.traj.json"
    trajectory = load_trajectory(path)
    markers = [m for m in trajectory.messages if m.message_type == MessageType.COMPACTION]
    assert markers, "no compaction was recorded"
    record = markers[0].extra.to_record()
    assert record["summary"] == SUMMARY and record["reason"] == "threshold" and record["model"]
    assert record["tokens_before"] > record["tokens_after"] and record["summary_usage"]["prompt_tokens"] > 0
    assert SUMMARY in markers[0].text
    # the ledger: what the replaced part ran, word for word after the summary, and sent so
    assert record["ledger"].startswith("What the replaced part touched") and "`seq 1 300` (exit 0)" in record["ledger"]
    assert markers[0].text.index(SUMMARY) < markers[0].text.index(record["ledger"])
    # every request the server received is what the file rebuilds (swedeck prompt's core function)
    sent = step_requests(openai_server)
    assert len(trajectory.steps) == len(sent)
    for number, received in enumerate(sent, 1):
        rebuilt = step_prompt(trajectory, number)
        assert as_litellm_sends_to_openai(rebuilt.request_messages()) == received["messages"], f"step {number}"
    after = next(n for n, body in enumerate(sent, 1) if SUMMARY in json.dumps(body["messages"]))
    assert any(record["ledger"] in str(message.get("content")) for message in sent[after - 1]["messages"])
    assert steps_in(sent[after - 1]) < steps_in(sent[after - 2])  # earlier steps are gone from it
    # ... and so does the CLI
    cli = subprocess.run([*swedeck_command(), "prompt", str(path), "--step", str(after), "--json"],
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0, cli.stderr
    shown = [{key: value for key, value in message.items()
              if key not in ("tokens", "history_index", "changed", "message_type")}
             for message in json.loads(cli.stdout)["messages"]]
    assert as_litellm_sends_to_openai(shown) == sent[after - 1]["messages"]
    # the meter's prediction after the compaction, against what the server then counted
    reported = provider_count(sent[after - 1])
    assert abs(record["tokens_after"] - reported) <= 0.05 * reported, (record["tokens_after"], reported)
    compacted = driver.of(ev.Compacted)
    assert compacted and compacted[0].tokens_after == record["tokens_after"] and not compacted[0].undone
    # the summary call counts in the run's totals
    info = json.loads(path.read_text())["info"]["model_stats"]
    assert info["api_calls"] == len(openai_server.requests)


def test_a_session_that_compacts_again_records_what_the_replay_reads_without_a_note(openai_server, tmp_path):
    # A second summary replaces the first with the steps it kept: its `replaces` follows the
    # history as the model saw it, so it names the first marker before the steps kept before it.
    openai_server.respond(scripted(steps_before_submit=14))
    config = config_for(openai_server, tmp_path)
    config.agent.step_limit = 20
    result = run_session(config, "print numbers", Driver(), interactive=False)
    assert result.exit_status == "Submitted", result.message
    trajectory = load_trajectory(tmp_path / "session.traj.json")
    markers = [m for m in trajectory.messages if m.message_type == MessageType.COMPACTION]
    assert len(markers) >= 2, "fewer than two compactions were recorded"
    assert compaction_problems(trajectory.messages) == []
    sent = step_requests(openai_server)
    assert [as_litellm_sends_to_openai(step_prompt(trajectory, number).request_messages())
            for number in range(1, len(sent) + 1)] == [body["messages"] for body in sent]


def test_headless_text_says_each_compaction(openai_server, tmp_path):
    """The headless progress lines say when the history is compacted and by which model, the
    model by its name (a replayed file by its file name, not its installed path) (issue 43.13)."""
    import io

    from swedeck.core.compaction_notes import model_label
    from swedeck.core.headless import ProgressPrinter

    openai_server.respond(scripted())
    driver = Driver()
    run_session(config_for(openai_server, tmp_path), "print numbers", driver, interactive=False)
    out = io.StringIO()
    printer = ProgressPrinter(out)
    for event in driver.events:
        printer(event)
    lines = out.getvalue().splitlines()
    started = [line for line in lines if line.startswith("  compacting: summarizing ")]
    done = [line for line in lines if line.startswith("  compacted ")]
    assert started and "(the context reached the summarize threshold)" in started[0]
    assert done and " -> " in done[0] and "messages summarized by hosted_vllm/" in done[0]
    # what it replaced that the model still sees: every command, with swedeck's ledger (issue 48.2)
    compacted = driver.of(ev.Compacted)[0]
    assert compacted.kept.startswith("kept: ") and "commands" in compacted.kept, compacted.kept
    assert all(kept == total for kept, total in (pair.split("/") for pair in
                                                 (part.rsplit(" ", 1)[1] for part in compacted.kept[6:].split(" · "))))
    assert done[0].endswith(compacted.kept)
    assert model_label("replay:/usr/lib/python3/site-packages/swedeck/configs/demo/demo.traj.json") == \
        "replay: demo.traj.json"


def compacted_then_undone(server, tmp_path) -> Driver:
    """A headless run that compacts, and undoes the compaction as soon as it is made."""
    server.respond(scripted(steps_before_submit=7))

    def undo_once(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.Compacted) and not event.undone:
            driver.session.compact(undo=True)

    driver = Driver(on_event=undo_once)
    result = run_session(config_for(server, tmp_path, at=0.6), "print numbers", driver, interactive=False)
    assert result.exit_status == "Submitted", result.message
    return driver


def test_undo_gives_back_the_prefix_from_before_the_compaction(openai_server, tmp_path):
    driver = compacted_then_undone(openai_server, tmp_path)
    sent = step_requests(openai_server)
    compacted_at = next(i for i, body in enumerate(sent) if SUMMARY in json.dumps(body["messages"]))
    before, after_undo = sent[compacted_at - 1]["messages"], sent[compacted_at + 1]["messages"]
    assert SUMMARY not in json.dumps(after_undo)
    # the request after the undo starts with the whole request before the compaction, byte for byte
    assert json.dumps(after_undo[: len(before)]) == json.dumps(before)
    assert [e.undone for e in driver.of(ev.Compacted)][:2] == [False, True]
    trajectory = load_trajectory(tmp_path / "session.traj.json")
    for number, received in enumerate(sent, 1):
        assert as_litellm_sends_to_openai(step_prompt(trajectory, number).request_messages()) == received["messages"]


def test_a_failed_summary_leaves_the_history_untouched_and_says_so(openai_server, tmp_path):
    for failure in (Turn.rate_limited(), Turn(text="Summary: half", drop_after=2)):
        openai_server.requests.clear()
        openai_server.respond(scripted(summary=failure))
        driver = Driver()
        folder = tmp_path / ("a" if failure.status == 429 else "b")
        folder.mkdir()
        result = run_session(config_for(openai_server, folder), "print numbers", driver, interactive=False)
        assert result.exit_status == "Submitted", result.message
        trajectory = load_trajectory(folder / "session.traj.json")
        assert not [m for m in trajectory.messages if m.message_type == MessageType.COMPACTION]
        failed = driver.of(ev.CompactionFailed)
        assert failed and "the history is unchanged" in failed[0].error
        assert any("the summary failed" in n.text for n in driver.of(ev.Notice))
        sent = step_requests(openai_server)
        assert all(steps_in(body) == n for n, body in enumerate(sent))  # nothing was dropped from any request


def test_a_refused_prompt_is_compacted_when_a_summary_fits(openai_server, tmp_path):
    """No summarize threshold: the provider refuses the prompt; `on_context_exceeded: fit`
    compacts (headless) and the run goes on."""
    openai_server.respond(scripted(steps_before_submit=9))
    config = config_for(openai_server, tmp_path)
    config.agent.history_processors = []
    config.agent.on_context_exceeded = "fit"
    driver = Driver()
    result = run_session(config, "print numbers", driver, interactive=False)
    assert result.exit_status == "Submitted", result.message
    trajectory = load_trajectory(tmp_path / "session.traj.json")
    markers = [m for m in trajectory.messages if m.message_type == MessageType.COMPACTION]
    assert markers and markers[0].extra.reason == "context_exceeded"


def test_the_meter_never_jumps_without_an_event_that_names_it(openai_server, tmp_path):
    """SPEC §17: between two meter readings (`ContextUpdated`), a change of more than a few
    percent in either figure comes with an event that explains it: a new message, a
    processor change, a compaction (or its undo), or the model's answer (a measured count)."""
    driver = compacted_then_undone(openai_server, tmp_path)
    naming = (ev.MessageAdded, ev.ProcessorsChanged, ev.Compacted, ev.QueryFinished)
    last: ev.ContextStatus | None = None
    named = False
    jumps = 0
    for event in driver.events:
        if isinstance(event, naming):
            named = True
        if not isinstance(event, ev.ContextUpdated):
            continue
        status = event.status
        if last is not None:
            for before, after in ((last.next_estimate, status.next_estimate), (last.prompt_tokens, status.prompt_tokens)):
                if before and after and abs(after - before) > 0.05 * before:
                    jumps += 1
                    assert named, f"the meter moved {before:,} -> {after:,} with no event naming why"
        last, named = status, False
    assert jumps >= 3  # the steps, the compaction and its undo all moved it
    assert len(driver.of(ev.Compacted)) >= 2


def test_the_meter_and_the_trigger_read_one_number(openai_server, tmp_path):
    """Issue 48.3: the meter shows where the next compaction fires against the very figure the
    trigger reads (`next ≈`), and how many compactions there were; at each compaction the number
    shown is the number that fired it (0 cases where they differ)."""
    from swedeck.core.meter import describe

    openai_server.respond(scripted())
    driver = Driver()
    run_session(config_for(openai_server, tmp_path), "print numbers", driver, interactive=False)
    shown: ev.ContextStatus | None = None
    fired = 0
    for event in driver.events:
        if isinstance(event, ev.ContextUpdated):
            shown = event.status
        elif isinstance(event, ev.CompactionStarted):
            assert shown is not None and shown.to_compaction == 0, shown
            at_start = shown
        elif isinstance(event, ev.Compacted) and not event.undone:
            fired += 1
            assert event.tokens_before == at_start.next_estimate  # the number shown is the one that fired
    assert fired >= 1
    statuses = [event.status for event in driver.events if isinstance(event, ev.ContextUpdated)]
    assert statuses[-1].compactions == fired and statuses[0].compactions == 0
    before = next(status for status in statuses if status.to_compaction)
    line = describe(before, None)
    assert f"compacts at {before.compact_at:,} ({before.to_compaction:,} to go)" in line
    assert f"{fired} compaction" in describe(statuses[-1], None)
