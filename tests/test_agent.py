"""SPEC §6: the agent loop, modes, turns and every way a session ends, end to end over real
HTTP (the scripted server) and a real shell."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.driver import Driver, make_config, run_session
from support.openai_server import ToolCallSpec, Turn, Usage, model_config
from support.reliability import SUBMIT
from swedeck.core import events as ev
from swedeck.core.exit_status import ExitStatus
from swedeck.core.messages import MessageType


def final_file(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "session.traj.json").read_text())


def types(messages: list) -> list[str]:
    return [m["extra"]["message_type"] for m in messages]


def test_task_solved_in_a_few_steps_headless(openai_server, tmp_path):
    openai_server.script(
        Turn.bash_tool("echo hello > greeting.txt", text="I will write the file.", usage=Usage(120, 15)),
        Turn.bash_tool("cat greeting.txt", usage=Usage(180, 10, cached_tokens=100)),
        Turn.bash_tool(f"{SUBMIT} && cat greeting.txt", usage=Usage(240, 12)),
    )
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    driver = Driver()
    result = run_session(config, "write hello to greeting.txt", driver, interactive=False)
    assert (result.exit_status, result.exit_code) == ("Submitted", 0)
    assert result.submission == "hello\n"
    assert (tmp_path / "greeting.txt").read_text() == "hello\n"
    saved = final_file(tmp_path)
    assert saved["info"]["exit_status"] == "Submitted" and saved["info"]["submission"] == "hello\n"
    assert saved["info"]["model_stats"]["api_calls"] == 3
    actions = [m for m in saved["messages"] if m["extra"]["message_type"] == "action"]
    assert [a["extra"]["usage"]["prompt_tokens"] for a in actions] == [120, 180, 240]
    assert actions[1]["extra"]["usage"]["cached_tokens"] == 100
    assert all("context" in a["extra"] and a["extra"]["context"]["prompt_tokens"] for a in actions)
    assert types(saved["messages"])[:2] == ["system", "task"]
    assert types(saved["messages"])[-1] == "final"
    assert not (tmp_path / "session.traj.jsonl").exists()
    # what the model was sent: the observation of step 1 answers its tool call
    second = openai_server.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and "<returncode>0</returncode>" in second[-1]["content"]
    assert all("extra" not in m for m in second)
    streamed = "".join(e.text for e in driver.of(ev.StreamDelta) if e.kind == "text" and e.step == 1)
    assert streamed == "I will write the file."


def test_confirm_mode_approve_edit_reject_with_comment(openai_server, tmp_path):
    openai_server.script(
        Turn.bash_tool("echo one"),
        Turn.bash_tool("echo two"),
        Turn.bash_tool("rm -rf /tmp/nothing-here"),
        Turn.bash_tool(SUBMIT),
    )
    config = make_config(tmp_path, model_config(openai_server))
    driver = Driver(
        decisions=[ev.Decision("approve"), ev.Decision("edit", command="echo edited"),
                   ev.Decision("reject", comment="do not delete things"), ev.Decision("approve")],
        inputs=[None],
    )
    result = run_session(config, "say things", driver)
    assert result.exit_status == "Submitted"
    decided = [(e.decision, e.command) for e in driver.of(ev.ActionDecided)]
    assert decided[:3] == [("approved", "echo one"), ("edited", "echo edited"), ("rejected", "rm -rf /tmp/nothing-here")]
    outputs = [e.result.output for e in driver.of(ev.CommandFinished)]
    assert outputs[:2] == ["one\n", "edited\n"]
    rejection = openai_server.requests[3]["messages"][-1]
    assert rejection["role"] == "tool"
    assert rejection["content"] == (
        "Commands not executed. The user rejected your command with the following message: do not delete things")


def test_the_words_for_commands_that_do_not_run_come_from_the_config(openai_server, tmp_path):
    """A rejection answers the rejected call and the calls after it; a submission answers the
    calls after it; both in the config's words (`agent.rejected_template`, `agent.not_run_template`)."""
    two = [ToolCallSpec("bash", {"command": "echo a"}, id="c1"), ToolCallSpec("bash", {"command": "echo b"}, id="c2")]
    openai_server.script(Turn(tool_calls=two),
                         Turn(tool_calls=[ToolCallSpec("bash", {"command": SUBMIT}, id="c3"),
                                          ToolCallSpec("bash", {"command": "echo after"}, id="c4")]))
    config = make_config(tmp_path, model_config(openai_server),
                         agent__rejected_template="NO ({{ comment }}) at step {{ step }}",
                         agent__not_run_template="SKIPPED: {{ reason }}")
    driver = Driver(decisions=[ev.Decision("reject", comment="not now"), ev.Decision("approve")], inputs=[None])
    assert run_session(config, "t", driver).exit_status == "Submitted"
    answers = {m["tool_call_id"]: m["content"] for m in openai_server.requests[1]["messages"] if m["role"] == "tool"}
    assert answers == {"c1": "NO (not now) at step 1", "c2": "NO (not now) at step 1"}
    saved = json.loads((tmp_path / "session.traj.json").read_text())["messages"]
    assert [m["content"] for m in saved if m.get("tool_call_id") == "c4"] == ["SKIPPED: the task was submitted."]


def test_always_allow_and_whitelist_skip_confirmation(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo a"), Turn.bash_tool("echo a"), Turn.bash_tool("ls"),
                         Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__whitelist_actions=[r"^ls\b", "COMPLETE_TASK"])
    driver = Driver(decisions=[ev.Decision("always_allow")], inputs=[None])
    result = run_session(config, "t", driver)
    assert result.exit_status == "Submitted"
    assert len(driver.of(ev.ConfirmationRequested)) == 1
    assert [e.decision for e in driver.of(ev.ActionDecided)] == ["approved", "auto", "auto", "auto"]


def test_switching_to_yolo_never_runs_the_pending_action(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo pending"), Turn.bash_tool("echo next"), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server))
    seen: list[str] = []

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.ConfirmationRequested):
            driver.session.set_mode("yolo")
            seen.append(f"ran before approval: {bool(driver.of(ev.CommandStarted))}")
            driver.later(lambda: event.future.set_result(ev.Decision("approve")))
    driver = Driver(on_event=on_event, inputs=[None])
    result = run_session(config, "t", driver)
    assert result.exit_status == "Submitted"
    assert seen == ["ran before approval: False"]
    assert len(driver.of(ev.ConfirmationRequested)) == 1
    assert [e.mode for e in driver.of(ev.ModeChanged)] == ["yolo"]
    meta = [m for m in final_file(tmp_path)["messages"] if m["extra"].get("mode") == "yolo"]
    assert meta, "messages after the switch record the yolo mode"


def test_human_mode_runs_typed_commands_without_querying(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="human")

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.InputRequested) and event.kind == "human_command" and not driver.inputs:
            driver.session.set_mode("yolo")
    driver = Driver(inputs=["cd /tmp && export HUMAN=typed", "echo $HUMAN $(pwd)"], on_event=on_event)
    result = run_session(config, "t", driver)
    assert result.exit_status == "Submitted"
    finished = [event.result for event in driver.of(ev.CommandFinished)]
    assert finished[1].output == "typed /tmp\n"
    assert len(openai_server.requests) == 1  # only after the switch back
    sent = openai_server.requests[0]["messages"]
    assert [m["role"] for m in sent[-4:]] == ["user", "user", "user", "user"]
    saved = types(final_file(tmp_path)["messages"])
    assert saved[2:6] == ["user_message", "observation", "user_message", "observation"]


def test_follow_up_task_starts_a_new_turn(openai_server, tmp_path):
    openai_server.script(
        Turn.bash_tool(f"{SUBMIT} && echo first"),
        Turn.bash_tool(f"{SUBMIT} && echo second"),
    )
    config = make_config(tmp_path, model_config(openai_server))
    driver = Driver(decisions=[ev.Decision("approve")] * 2, inputs=["now the second task", None])
    result = run_session(config, "first task", driver)
    assert (result.exit_status, result.submission) == ("Submitted", "second\n")
    messages = final_file(tmp_path)["messages"]
    tasks = [m for m in messages if m["extra"]["message_type"] == "task"]
    assert [t["extra"]["turn"] for t in tasks] == [1, 2]
    assert "now the second task" in tasks[1]["content"]
    assert [m["content"] for m in messages if m["extra"]["message_type"] == "final"] == ["first\n", "second\n"]
    assert [r.kind for r in driver.of(ev.InputRequested)] == ["follow_up", "follow_up"]


def test_interrupting_the_model_stream_then_sending_a_message(openai_server, tmp_path):
    openai_server.script(
        Turn(text="a very slow answer " * 20, chunks=40, chunk_delay_s=0.1, tool_calls=[ToolCallSpec("bash", {"command": "echo never"})]),
        Turn.bash_tool(SUBMIT),
    )
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.StreamDelta) and len(driver.of(ev.StreamDelta)) == 2:
            driver.later(driver.session.interrupt)
    driver = Driver(on_event=on_event, inputs=["use a faster approach", None])
    result = run_session(config, "t", driver)
    assert result.exit_status == "Submitted"
    assert driver.of(ev.QueryCancelled)
    assert not any(e.command == "echo never" for e in driver.of(ev.CommandStarted))
    saved = final_file(tmp_path)["messages"]
    kinds = types(saved)
    assert kinds[2:4] == ["interrupt", "user_message"]
    assert saved[3]["content"] == "use a faster approach"


def test_interrupting_a_command_keeps_the_shell(openai_server, tmp_path):
    openai_server.script(
        Turn.bash_tool("export KEEP=kept && sleep 30"),
        Turn.bash_tool("echo $KEEP"),
        Turn.bash_tool(SUBMIT),
    )
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo", timeout=60)

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.CommandStarted) and "sleep" in event.command:
            driver.later(driver.session.interrupt)
    driver = Driver(on_event=on_event, inputs=[""])
    result = run_session(config, "t", driver, timeout=40)
    assert result.exit_status == "Submitted"
    finished = [event.result for event in driver.of(ev.CommandFinished)]
    assert finished[0].interrupted and finished[0].duration_s < 20
    assert finished[1].output == "kept\n"
    assert "interrupt" in types(final_file(tmp_path)["messages"])


@pytest.mark.parametrize("agent_class", ["default", "interactive"])
def test_step_limit_ends_headless_with_exit_3(openai_server, tmp_path, agent_class):
    openai_server.script(Turn.bash_tool("echo 1"), Turn.bash_tool("echo 2"))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo", agent__step_limit=1,
                         agent__agent_class=agent_class)
    result = run_session(config, "t", Driver(), interactive=False)
    assert (result.exit_status, result.exit_code) == ("LimitsExceeded", 3)
    assert len(openai_server.requests) == 1


def test_limit_pauses_an_interactive_session_and_can_be_raised(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo 1"), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo", agent__step_limit=1)
    driver = Driver(pauses=[ev.PauseDecision("raise_limits", step_limit=5)], inputs=[None])
    result = run_session(config, "t", driver)
    assert result.exit_status == "Submitted"
    assert [r.reason for r in driver.of(ev.PauseRequested)] == ["limit"]


def test_cost_limit(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo 1", usage=Usage(1000, 1000)), Turn.bash_tool("echo 2"))
    model = model_config(openai_server, name="gpt-4o", provider="openai", cost_tracking="default")
    config = make_config(tmp_path, model, agent__mode="yolo", agent__cost_limit=0.000001)
    result = run_session(config, "t", Driver(), interactive=False)
    assert result.exit_status == "LimitsExceeded"
    assert final_file(tmp_path)["info"]["model_stats"]["instance_cost"] > 0


def test_consecutive_format_errors_end_the_session(openai_server, tmp_path):
    bad = Turn(tool_calls=[ToolCallSpec("bash", '{"command": ')])
    openai_server.script(bad, Turn(text="no tool call at all"), bad)
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    result = run_session(config, "t", Driver(), interactive=False)
    assert (result.exit_status, result.exit_code) == ("FormatError", 1)
    saved = types(final_file(tmp_path)["messages"])
    assert saved.count("format_error") == 3
    # each malformed tool call was answered with a tool message, so the next request is valid
    second = openai_server.requests[1]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == second[-2]["tool_calls"][0]["id"]


def test_context_window_exceeded_is_its_own_end(openai_server, tmp_path):
    openai_server.script(Turn.context_exceeded())
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    result = run_session(config, "t", Driver(), interactive=False)
    assert result.exit_status == "ContextWindowExceeded"
    assert len(openai_server.requests) == 1


OVERFLOW_WINDOW = 6_000


def script_an_overflow(openai_server) -> None:
    """Two long outputs; the provider then refuses the third prompt as too long (the
    prediction agrees: it is over the window) and accepts the next one."""
    openai_server.script(Turn.bash_tool("seq 1 1500", usage=Usage(500, 5)),
                         Turn.bash_tool("seq 1 1500", usage=Usage(3_200, 5)),
                         Turn.context_exceeded(), Turn.bash_tool(SUBMIT, usage=Usage(3_300, 5)))


def test_context_window_exceeded_offers_the_smallest_change_that_fits(openai_server, tmp_path):
    script_an_overflow(openai_server)
    config = make_config(tmp_path, model_config(openai_server, context_window=OVERFLOW_WINDOW), agent__mode="yolo")

    def take_the_fit(d: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.PauseRequested):
            d.pauses.append(ev.PauseDecision("enable_processor", processors=event.fit.processors))

    driver = Driver(inputs=[None], on_event=take_the_fit)
    result = run_session(config, "count", driver)
    assert result.exit_status == "Submitted"
    (pause,) = driver.of(ev.PauseRequested)
    assert pause.reason == "context_exceeded" and pause.fit.change == "last_n_observations(n=1)"
    assert pause.fit.expected_tokens <= 0.9 * OVERFLOW_WINDOW and "it fits with last_n_observations(n=1)" in pause.detail
    advice = [e.status.advice for e in driver.of(ev.ContextUpdated) if e.status.advice]
    assert advice and advice[0].startswith("fits with last_n_observations(n=1)")  # shown on the meter
    retried = openai_server.requests[3]["messages"]
    assert any("Old environment output" in str(m.get("content")) for m in retried)
    assert [p.type for p in driver.session.processors] == ["last_n_observations"]


def test_headless_fits_the_window_when_the_config_allows_it(openai_server, tmp_path):
    script_an_overflow(openai_server)
    config = make_config(tmp_path, model_config(openai_server, context_window=OVERFLOW_WINDOW), agent__mode="yolo",
                         agent__on_context_exceeded="fit")
    driver = Driver()
    assert run_session(config, "count", driver, interactive=False).exit_status == "Submitted"
    assert any("switched on last_n_observations(n=1)" in n.text for n in driver.of(ev.Notice))
    events = [e for e in final_file(tmp_path)["meta_events"] if e["event"] == "processors_change"]
    assert events[-1]["processors"][-1] == {"type": "last_n_observations", "n": 1, "enabled": True,
                                            "polling": 1, "always_remove_output_for_tags": ["remove_output"],
                                            "always_keep_output_for_tags": ["keep_output"]}


def test_headless_without_fit_stops_and_says_what_would_fit(openai_server, tmp_path):
    script_an_overflow(openai_server)
    config = make_config(tmp_path, model_config(openai_server, context_window=OVERFLOW_WINDOW), agent__mode="yolo")
    result = run_session(config, "count", Driver(), interactive=False)
    assert result.exit_status == "ContextWindowExceeded"
    assert "it fits with last_n_observations(n=1)" in result.message


def test_api_error_ends_headless_and_retry_continues_interactive(openai_server, tmp_path):
    openai_server.script(Turn.unauthorized())
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    result = run_session(config, "t", Driver(), interactive=False)
    assert result.exit_status == "APIError"
    openai_server.script(Turn.error(500), Turn.error(500), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server, attempts=2), agent__mode="yolo")
    driver = Driver(pauses=[ev.PauseDecision("retry")], inputs=[None])
    result = run_session(config, "t", driver)
    assert result.exit_status == "Submitted"
    assert [r.reason for r in driver.of(ev.PauseRequested)] == ["api_error"]
    assert len(driver.of(ev.QueryRetrying)) == 1


def test_environment_error_when_startup_fails(openai_server, tmp_path):
    config = make_config(tmp_path, model_config(openai_server), environment__post_startup_commands=["exit 3"])
    result = run_session(config, "t", Driver(), interactive=False)
    assert (result.exit_status, result.exit_code) == ("EnvironmentError", 1)
    assert final_file(tmp_path)["info"]["exit_status"] == "EnvironmentError"


def test_user_quit_while_waiting_for_confirmation(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo x"))
    config = make_config(tmp_path, model_config(openai_server))

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.ConfirmationRequested):
            driver.later(driver.session.quit)
    result = run_session(config, "t", Driver(on_event=on_event))
    assert (result.exit_status, result.exit_code) == ("UserQuit", 0)
    assert final_file(tmp_path)["info"]["exit_status"] == "UserQuit"


def test_the_first_quit_names_the_end(openai_server, tmp_path):
    """A signal quits with Interrupted; the UI closing after it quits again as a user quit.
    The record keeps the first reason (the live UI under SIGTERM recorded UserQuit)."""
    openai_server.script(Turn.bash_tool("echo x"))
    config = make_config(tmp_path, model_config(openai_server))

    def quit_twice(session) -> None:
        session.quit(ExitStatus.INTERRUPTED)
        session.quit()

    def on_event(driver: Driver, event: ev.Event) -> None:
        if isinstance(event, ev.ConfirmationRequested):
            driver.later(lambda: quit_twice(driver.session))
    result = run_session(config, "t", Driver(on_event=on_event))
    assert result.exit_status == "Interrupted"
    assert final_file(tmp_path)["info"]["exit_status"] == "Interrupted"


def test_text_agent_parses_fenced_blocks(openai_server, tmp_path):
    openai_server.script(Turn.bash_text("echo from-text"), Turn.bash_text(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo", agent__agent_class="text")
    driver = Driver()
    result = run_session(config, "t", driver, interactive=False)
    assert result.exit_status == "Submitted"
    assert "tools" not in openai_server.requests[0]
    assert driver.of(ev.CommandFinished)[0].result.output == "from-text\n"
    assert openai_server.requests[1]["messages"][-1]["role"] == "user"


def test_reasoning_tool_call_agent_requires_reasoning(openai_server, tmp_path):
    openai_server.script(
        Turn(tool_calls=[ToolCallSpec("bash", {"reasoning": "", "command": "ls"})]),
        Turn(tool_calls=[ToolCallSpec("bash", {"reasoning": "done", "command": SUBMIT})]),
    )
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo",
                         agent__agent_class="reasoning_tool_call")
    result = run_session(config, "t", Driver(), interactive=False)
    assert result.exit_status == "Submitted"
    schema = openai_server.requests[0]["tools"][0]["function"]["parameters"]
    assert schema["required"][:2] == ["reasoning", "command"]
    assert "format_error" in types(final_file(tmp_path)["messages"])


def test_every_query_records_its_processors_and_context(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo 1", usage=Usage(500, 5)), Turn.bash_tool(SUBMIT, usage=Usage(600, 5)))
    config = make_config(tmp_path, model_config(openai_server, context_window=1000), agent__mode="yolo",
                         agent__history_processors=[{"type": "last_n_observations", "n": 1}])
    driver = Driver()
    run_session(config, "t", driver, interactive=False)
    actions = [m for m in final_file(tmp_path)["messages"] if m["extra"]["message_type"] == "action"]
    assert all(a["extra"]["processors"] for a in actions)
    assert actions[1]["extra"]["context"] == {"window": 1000, "prompt_tokens": 600, "left_percent": 40.0}
    updates = driver.of(ev.ContextUpdated)
    assert updates and updates[-1].status.next_estimate > 0


def test_replay_model_drives_a_session_and_ends_cleanly_when_exhausted(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo recorded > r.txt"), Turn.bash_tool("cat r.txt"))
    recording = make_config(tmp_path, model_config(openai_server), agent__mode="yolo", agent__step_limit=2)
    run_session(recording, "record", Driver(), interactive=False)
    recorded = tmp_path / "recorded.traj.json"
    (tmp_path / "session.traj.json").rename(recorded)
    (tmp_path / "r.txt").unlink()
    from swedeck.core.config import ModelConfig

    replay = ModelConfig(model_name=f"replay:{recorded}", model_kwargs={"tokens_per_second": 0})
    config = make_config(tmp_path, replay, agent__mode="yolo")
    driver = Driver()
    result = run_session(config, "record", driver, interactive=False)
    assert (result.exit_status, result.exit_code) == ("ReplayExhausted", 0)
    assert [e.result.output for e in driver.of(ev.CommandFinished)] == ["", "recorded\n"]
    assert (tmp_path / "r.txt").read_text() == "recorded\n"


def test_task_solved_headless_in_docker(openai_server, tmp_path):
    from support.docker_env import docker_client

    client = docker_client()
    openai_server.script(
        Turn.bash_tool("cd /tmp && echo inside > proof.txt", usage=Usage(100, 10)),
        Turn.bash_tool(f"{SUBMIT} && cat /tmp/proof.txt && hostname", usage=Usage(150, 10)),
    )
    config = make_config(tmp_path, model_config(openai_server), env="docker", agent__mode="yolo")
    result = run_session(config, "prove you ran in the container", Driver(), interactive=False, timeout=120)
    assert (result.exit_status, result.exit_code) == ("Submitted", 0), result.message
    proof, hostname = result.submission.splitlines()
    assert proof == "inside" and not (tmp_path / "proof.txt").exists()
    saved = final_file(tmp_path)
    assert saved["info"]["exit_status"] == "Submitted"
    assert [m["extra"]["usage"]["prompt_tokens"] for m in saved["messages"] if m["extra"]["message_type"] == "action"] == [100, 150]
    assert not [c for c in client.containers.list(all=True) if hostname in (c.id[:12], c.name)]


def test_the_next_prompt_is_predicted_from_what_the_provider_measured(openai_server, tmp_path):
    # The provider counts 20,000 tokens where a local count sees a few hundred (its template,
    # its tools, its tokenizer): the prediction starts from its figure, not from zero.
    openai_server.script(Turn.bash_tool("seq 1 200", usage=Usage(20_000, 5)),
                         Turn.bash_tool("seq 1 200", usage=Usage(20_900, 5)), Turn.bash_tool(SUBMIT, usage=Usage(21_800, 5)))
    config = make_config(tmp_path, model_config(openai_server, context_window=128_000), agent__mode="yolo")
    driver = Driver()

    def toggle_after_step_2(d: Driver, event: ev.Event) -> None:
        observations = [e for e in d.of(ev.MessageAdded) if e.message.message_type == MessageType.OBSERVATION]
        if isinstance(event, ev.MessageAdded) and event.message.message_type == MessageType.OBSERVATION \
                and len(observations) == 2:
            before = d.session.context_status()
            d.session.set_processors([{"type": "last_n_observations", "n": 1}])
            d.toggled = (before, d.session.context_status())

    driver.on_event = toggle_after_step_2
    assert run_session(config, "count", driver, interactive=False).exit_status == "Submitted"
    after_first = next(e.status for e in driver.of(ev.ContextUpdated) if e.status.prompt_tokens == 20_000
                       and e.status.next_estimate is not None)
    assert after_first.next_anchored and 20_000 <= after_first.next_estimate < 20_000 + 2_000
    before, after = driver.toggled
    assert before.next_anchored and after.next_anchored
    assert after.next_estimate < before.next_estimate  # the processor's effect shows at once
    # The prediction for query 2 agrees with what the provider then measured (within the
    # local tokenizer's error on what was added): the scripted figures grow by 900.
    assert abs(after_first.next_estimate - 20_900) < 900


def test_without_usage_the_figures_say_they_are_estimates(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo 1"), Turn.bash_tool(SUBMIT))  # no usage at all
    config = make_config(tmp_path, model_config(openai_server, context_window=10_000), agent__mode="yolo")
    driver = Driver()
    run_session(config, "t", driver, interactive=False)
    status = driver.of(ev.ContextUpdated)[-1].status
    assert status.estimated and not status.next_anchored and status.prompt_tokens


def test_always_allow_takes_a_prefix_shows_it_and_never_carries_a_compound_along(openai_server, tmp_path):
    from swedeck.core.agent.approvals import command_prefix

    assert command_prefix("git status --short") == "git status"
    assert command_prefix("python -m pytest -q tests/") == "python -m pytest"
    assert command_prefix("FOO=1 pytest -x") == "FOO=1 pytest"  # the assignment is part of the rule
    assert command_prefix("git status && rm -rf x") is None and command_prefix("cat $(ls)") is None
    openai_server.script(Turn.bash_tool("git status"), Turn.bash_tool("git status --short"),
                         Turn.bash_tool("git status && echo sneaky > file"), Turn.bash_tool("echo edited-not"),
                         Turn.bash_tool(SUBMIT))
    (tmp_path / ".git").mkdir()
    config = make_config(tmp_path, model_config(openai_server))
    config.agent.whitelist_actions = ["^echo COMPLETE_TASK"]
    driver = Driver(decisions=[ev.Decision("always_allow"), ev.Decision("approve"),
                               ev.Decision("edit", command="echo edited")], inputs=[None])
    assert run_session(config, "t", driver).exit_status == "Submitted"
    asked = [r.command for r in driver.of(ev.ConfirmationRequested)]
    assert asked == ["git status", "git status && echo sneaky > file", "echo edited-not"]
    decided = [(d.decision, d.reason) for d in driver.of(ev.ActionDecided)]
    assert decided[0] == ("approved", "and from now on: git status …")
    assert decided[1] == ("auto", "always allowed: git status …")
    assert decided[3] == ("edited", "edited from: echo edited-not")
    assert decided[4] == ("auto", "whitelisted")
    approvals = [m["extra"]["approval"] for m in final_file(tmp_path)["messages"]
                 if m["extra"]["message_type"] == "observation"]
    assert approvals == ["approved", "auto: always allowed: git status …", "approved", "edited", "auto: whitelisted"]


def test_a_rule_never_runs_hidden_expansions_or_a_rerouted_name(openai_server, tmp_path):
    """Issue 44.5, 44.6: with `ls` always allowed, expansions that run code (`${_@P}`, `$[...]`,
    `$_`, `$'\\x24(...)'`) and options that make a program run another ask; and once an approved
    command makes `ls` a function (or an alias, a hashed path, a new PATH entry), `ls` asks again,
    in the real shell, with the reason said."""
    from swedeck.core.agent.approvals import Approvals

    approvals = Approvals()
    approvals.allow("ls -la")
    approvals.allow("git status")
    for hidden in ("ls '\\044(touch X)'; ls ${_@P}", "ls $'a[\\x24(touch X)]'; ls $[_]", "ls $_", "ls ${HOME:-x}",
                   "ls $((1+1))", 'ls $"x"'):
        assert approvals.allowed_by(hidden) is None, hidden
    for rerouting in ("git status -c core.fsmonitor=x", "git status --ext-diff"):
        assert approvals.allowed_by(rerouting) is None, rerouting
    assert approvals.allowed_by("ls -la src") is not None

    marker = tmp_path / "payload-ran"
    impostor = f"unset -f ls; mkdir -p bin; printf '#!/bin/sh\\ntouch {marker}\\n' > bin/ls; chmod +x bin/ls; " \
               'export PATH="$PWD/bin:$PATH"'
    openai_server.script(Turn.bash_tool("ls"), Turn.bash_tool(f"ls() {{ touch {marker}; }}"), Turn.bash_tool("ls"),
                         Turn.bash_tool(impostor), Turn.bash_tool("ls"), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server))
    config.agent.whitelist_actions = ["^echo COMPLETE_TASK"]
    driver = Driver(decisions=[ev.Decision("always_allow"), ev.Decision("approve"), ev.Decision("reject"),
                               ev.Decision("approve"), ev.Decision("reject")], inputs=[None])
    assert run_session(config, "t", driver).exit_status == "Submitted"
    asked = [r.command for r in driver.of(ev.ConfirmationRequested)]
    assert asked == ["ls", f"ls() {{ touch {marker}; }}", "ls", impostor, "ls"]
    assert not marker.exists()
    notices = [n.text for n in driver.of(ev.Notice) if n.text.startswith("not run by its rule")]
    assert "`ls` now resolves to function" in notices[0] and "/bin/ls (it was file " in notices[1], notices


def test_collaborators_return_changes_that_the_agent_applies():
    """`endings` and `compaction` never write the agent's fields: they return a `Change`, and
    `Agent.apply` is the one place the agent's state changes. A later change wins where it says something."""
    from swedeck.core.agent.changes import NO_CHANGE, Change

    failed = Change(quiet_until=7)
    fitted = failed.then(Change(fit_applied=True, processors=[{"type": "last_n_observations", "n": 2}]))
    assert fitted == Change(quiet_until=7, fit_applied=True, processors=[{"type": "last_n_observations", "n": 2}])
    assert fitted.then(Change(quiet_until=0)).quiet_until == 0 and NO_CHANGE.then(NO_CHANGE) == NO_CHANGE
    assert Change(compacted=True).then(Change(progress=True)) == Change(compacted=True, progress=True)


def test_agent_rules_allow_deny_and_leave_the_rest_to_the_person(openai_server, tmp_path):
    """SPEC §20: `agent.rules` (here a Claude Code settings file) in swedeck's confirm mode."""
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)", "Bash(echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT)"],
                                                    "deny": ["Bash(rm:*)"]}}))
    openai_server.script(Turn.bash_tool("ls -la"), Turn.bash_tool("ls && rm -rf build"), Turn.bash_tool("echo hi"),
                         Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__rules=[str(settings)])
    driver = Driver(decisions=[ev.Decision("approve")], inputs=[None])
    result = run_session(config, "t", driver)
    assert result.exit_status == "Submitted"
    assert [event.command for event in driver.of(ev.ConfirmationRequested)] == ["echo hi"]
    decided = [(event.command, event.decision, event.reason) for event in driver.of(ev.ActionDecided)]
    assert decided[0][:2] == ("ls -la", "auto") and "allow: Bash(ls:*)" in decided[0][2]
    assert decided[1][:2] == ("ls && rm -rf build", "rejected") and "deny: Bash(rm:*)" in decided[1][2]
    rejected = [message for message in openai_server.requests[2]["messages"] if message["role"] in ("tool", "user")]
    assert "deny: Bash(rm:*)" in json.dumps(rejected[-1])  # the model is told which rule


def test_a_rule_allowed_command_is_probed_and_a_state_change_before_it_asks(openai_server, tmp_path):
    """Issue 61.2, in the real shell: under rules that allow `cd`, `git status` and `ls`, a
    repository whose `core.fsmonitor` runs a payload asks before `git status` (the probe's git
    half really runs: it had an option git refuses), `cd evilrepo && git status` asks (the
    first part changes where the second runs), and a function named `ls` asks."""
    import subprocess

    marker = tmp_path / "fsmonitor-ran"
    repo = tmp_path / "work" / "evilrepo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "core.fsmonitor", f"touch {marker}; false"], check=True)
    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(cd:*)", "Bash(git status:*)", "Bash(ls:*)",
                                                              "Bash(echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT)"]}}))
    openai_server.script(Turn.bash_tool("cd evilrepo && git status"), Turn.bash_tool("cd evilrepo"),
                         Turn.bash_tool("git status"), Turn.bash_tool("cd .. && ls() { echo shadowed; }"),
                         Turn.bash_tool("ls"), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__rules=[str(settings)])
    config.environment.cwd = str(tmp_path / "work")
    driver = Driver(decisions=[ev.Decision("reject"), ev.Decision("reject"), ev.Decision("approve"),
                               ev.Decision("reject")], inputs=[None])
    assert run_session(config, "t", driver).exit_status == "Submitted"
    asked = [r.command for r in driver.of(ev.ConfirmationRequested)]
    assert asked == ["cd evilrepo && git status", "git status", "cd .. && ls() { echo shadowed; }", "ls"], asked
    assert not marker.exists()
    notices = [n.text for n in driver.of(ev.Notice) if n.text.startswith("not run by its rule")]
    assert "git-config core.fsmonitor" in notices[0] and "`ls` resolves to function" in notices[1], notices
