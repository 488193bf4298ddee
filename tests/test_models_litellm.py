"""LitellmModel over real HTTP to the scripted server (tests/support/openai_server.py)."""

from __future__ import annotations

import threading
import time

import pytest

from support.openai_server import ToolCallSpec, Turn, Usage, model_config, openai_server  # noqa: F401
from support.waiting import wait_until
from swedeck.core.events import QueryRetrying, StreamDelta
from swedeck.core.messages import MessageType, make_message
from swedeck.core.models import get_model
from swedeck.core.models.base import APIError, ContextWindowExceeded, FormatError, ModelSpec, QueryCancelled
from swedeck.core.models.litellm_model import DUMMY_API_KEY, LitellmModel

TASK = [make_message("system", "You are a helper.", MessageType.SYSTEM), make_message("user", "Fix it", MessageType.TASK)]


def _model(server, spec: ModelSpec | None = None, **fields) -> LitellmModel:
    model = get_model(model_config(server, **fields), spec)
    assert isinstance(model, LitellmModel)
    return model


def _deltas(events, kind=None):
    return [e for e in events if isinstance(e, StreamDelta) and (kind is None or e.kind == kind)]


def test_text_streams_in_order_and_the_message_is_rebuilt(openai_server):
    openai_server.script(Turn(text="Let me look at the files first", chunks=6, reasoning="thinking hard",
                              tool_calls=[ToolCallSpec("bash", {"command": "ls -la"})], usage=Usage(100, 20)))
    events = []
    response = _model(openai_server).query(TASK, step=3, emit=events.append)
    texts = _deltas(events, "text")
    assert len(texts) == 6 and all(e.step == 3 for e in texts)
    assert "".join(e.text for e in texts) == "Let me look at the files first"
    assert "".join(e.text for e in _deltas(events, "reasoning")) == "thinking hard"
    message = response.message
    assert message.content == "Let me look at the files first"
    assert message.extra.message_type == MessageType.ACTION
    assert message.extra.reasoning == "thinking hard"
    assert [a.command for a in response.actions] == ["ls -la"]
    assert message.extra.actions == tuple(response.actions)
    assert response.usage.prompt_tokens == 100 and not response.usage.estimated
    sent = openai_server.requests[0]
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["messages"][1] == {"role": "user", "content": "Fix it"}
    assert [t["function"]["name"] for t in sent["tools"]] == ["bash"]
    assert sent["tools"][0]["function"]["parameters"]["required"] == ["command"]


def test_tool_call_arguments_split_over_many_chunks_and_two_parallel_calls(openai_server):
    long_command = "grep -rn 'needle' src/ | head -50 && echo " + "x" * 200
    openai_server.script(Turn(tool_calls=[ToolCallSpec("bash", {"command": long_command}, id="a", chunks=40),
                                          ToolCallSpec("bash", {"command": "pwd"}, id="b", chunks=3)],
                              usage=Usage(10, 5)))
    events = []
    response = _model(openai_server).query(TASK, emit=events.append)
    assert [(a.command, a.tool_call_id) for a in response.actions] == [(long_command, "a"), ("pwd", "b")]
    assert len(_deltas(events, "tool_call")) > 40
    starts = [e for e in _deltas(events, "tool_call") if e.name]
    assert [(e.index, e.name) for e in starts] == [(0, "bash"), (1, "bash")]
    assert [c.id for c in response.message.tool_calls] == ["a", "b"]
    assert response.message.content is None


@pytest.mark.parametrize("stream_process", [True, False], ids=["stream-process", "in-thread"])
def test_a_long_stream_keeps_text_tool_call_and_usage_while_litellm_lets_go_of_old_chunks(
        openai_server, monkeypatch, stream_process):
    # litellm keeps every chunk until the stream ends; swedeck trims that list as chunks pass
    # (bench B1). The answer, the tool call and the provider's usage must come through whole.
    from swedeck.core.models import http_call

    kept = []
    trim = http_call.trim_kept_chunks

    def watch(stream):
        trim(stream)
        kept.append(len(stream.chunks))

    monkeypatch.setattr(http_call, "trim_kept_chunks", watch)  # seen in this process only
    text = " ".join(f"word{i}" for i in range(1500))
    command = "echo " + "y" * 900
    openai_server.script(Turn(text=text, chunks=1500, reasoning="r" * 600, tool_calls=[
        ToolCallSpec("bash", {"command": command}, chunks=300)], usage=Usage(4321, 1800)))
    events = []
    response = _model(openai_server, stream_process=stream_process).query(TASK, emit=events.append)
    assert response.message.content == text and response.message.extra.reasoning == "r" * 600
    assert [a.command for a in response.actions] == [command]
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (4321, 1800)
    assert not response.usage.estimated
    assert "".join(e.text for e in _deltas(events, "text")) == text
    if not stream_process:
        assert len(kept) > 1500 and max(kept) < 300


def test_a_long_stream_without_usage_is_estimated_from_the_whole_answer(openai_server):
    text = " ".join(f"word{i}" for i in range(1500))
    openai_server.script(Turn(text=text, chunks=1500, tool_calls=[ToolCallSpec("bash", {"command": "ls"})], usage=None))
    response = _model(openai_server, usage_fallback="estimate").query(TASK)
    assert response.usage.estimated and response.usage.completion_tokens > 1500


def test_usage_chunk_with_empty_choices_and_cached_tokens(openai_server):
    openai_server.script(Turn.bash_tool("ls", usage=Usage(1234, 56, cached_tokens=1000)))
    model = _model(openai_server)
    response = model.query(TASK)
    assert response.usage.prompt_tokens == 1234 and response.usage.completion_tokens == 56
    assert response.usage.cached_tokens == 1000
    assert response.message.extra.usage == response.usage
    assert (model.stats.api_calls, model.stats.prompt_tokens, model.stats.completion_tokens) == (1, 1234, 56)


def test_no_usage_estimate(openai_server):
    openai_server.script(Turn.bash_tool("ls", usage=None))
    response = _model(openai_server, usage_fallback="estimate").query(TASK)
    assert response.usage.estimated and response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert len(openai_server.requests) == 1


def test_no_usage_requery_sends_a_non_streaming_request(openai_server):
    openai_server.script(Turn.bash_tool("ls", usage=None), Turn.bash_tool("ls", usage=Usage(77, 7)))
    model = _model(openai_server, usage_fallback="requery")
    response = model.query(TASK)
    assert response.usage.prompt_tokens == 77 and not response.usage.estimated
    assert [r.get("stream", False) for r in openai_server.requests] == [True, False]
    assert model.stats.api_calls == 2


def test_no_usage_none_records_nothing(openai_server):
    openai_server.script(Turn.bash_tool("ls", usage=Usage(0, 0)))
    response = _model(openai_server, usage_fallback="none").query(TASK)
    assert response.usage is None and response.message.extra.usage is None


def test_429_with_retry_after_then_success(openai_server):
    openai_server.script(Turn(text="partial answer", chunks=3, drop_after=2), Turn.rate_limited("0.3"),
                         Turn.bash_tool("ls", text="second try", usage=Usage(5, 5)))
    events = []
    started = time.monotonic()
    response = _model(openai_server, attempts=3).query(TASK, step=1, emit=events.append)
    elapsed = time.monotonic() - started
    retries = [e for e in events if isinstance(e, QueryRetrying)]
    assert [(r.attempt, r.attempts) for r in retries] == [(1, 3), (2, 3)]
    assert retries[1].wait_s == pytest.approx(0.3) and "429" in retries[1].error
    assert elapsed >= 0.3  # the Retry-After wait was honoured
    # The partial text of the dropped attempt came before a QueryRetrying: the UI discards it.
    first_retry = events.index(retries[0])
    assert any(isinstance(e, StreamDelta) for e in events[:first_retry])
    assert response.message.content == "second try"
    assert len(openai_server.requests) == 3


def test_500_then_success(openai_server):
    openai_server.script(Turn.error(500), Turn.error(503), Turn.bash_tool("ls", usage=Usage(5, 5)))
    events = []
    response = _model(openai_server, attempts=3).query(TASK, emit=events.append)
    assert response.actions[0].command == "ls"
    assert sum(isinstance(e, QueryRetrying) for e in events) == 2


def test_connection_dropped_mid_stream_then_success(openai_server):
    openai_server.script(Turn(text="a" * 40, chunks=10, drop_after=4), Turn.bash_tool("echo ok", usage=Usage(5, 5)))
    response = _model(openai_server).query(TASK)
    assert response.actions[0].command == "echo ok"
    assert "a" * 40 not in (response.message.content or "")


def test_hang_times_out_is_retried_then_gives_up(openai_server):
    openai_server.script(Turn(hang_s=5), Turn(hang_s=5))
    events = []
    with pytest.raises(APIError) as caught:
        _model(openai_server, attempts=2, timeout_s=0.3).query(TASK, emit=events.append)
    assert caught.value.retryable and caught.value.attempts == 2
    # the server's thread records a request once it has read it, which on a busy machine can
    # come after the client's 0.3 s timeout: wait for the record, never for a fixed time
    wait_until(lambda: len(openai_server.requests) == 2, timeout=10)
    assert sum(isinstance(e, QueryRetrying) for e in events) == 1


def test_context_length_exceeded_is_not_retried(openai_server):
    openai_server.script(Turn.context_exceeded(), Turn.bash_tool("ls"))
    with pytest.raises(ContextWindowExceeded):
        _model(openai_server).query(TASK)
    assert len(openai_server.requests) == 1


def test_401_is_not_retried(openai_server):
    openai_server.script(Turn.unauthorized(), Turn.bash_tool("ls"))
    with pytest.raises(APIError) as caught:
        _model(openai_server).query(TASK)
    assert not caught.value.retryable and "401" in str(caught.value)
    assert len(openai_server.requests) == 1


def test_stream_guard_cuts_a_verbatim_repetition_after_its_first_copy(openai_server):
    paragraph = "I will now check the parser again, since the test still fails on the empty input. "
    openai_server.script(Turn(text="Thinking.\n" + paragraph * 25 + "```bash\necho never\n```", chunks=300,
                              usage=None))
    model = _model(openai_server, ModelSpec(action_format="text"), stream_guard_enabled=True,
                   stream_guard_window=8192, stream_guard_tag_threshold=50)
    with pytest.raises(FormatError) as cut:  # what is left has no command: fed back as a format error
        model.query(TASK)
    message = cut.value.message
    assert message.extra.stream_guard and message.content == "Thinking.\n" + paragraph  # the first copy, not 25
    assert len(openai_server.requests) == 1


def test_stream_guard_leaves_ordinary_repeated_lines_alone(openai_server):
    table = "".join(f"| row {i:03d} | value {i * i:6d} | ok |\n" for i in range(200)) + "=" * 400
    openai_server.script(Turn(text=table + "\n```bash\necho fine\n```", chunks=200, usage=None))
    model = _model(openai_server, ModelSpec(action_format="text"), stream_guard_enabled=True)
    response = model.query(TASK)
    assert not response.stream_guard_fired and response.actions[0].command == "echo fine"


def test_stream_guard_cuts_a_closing_tag_loop(openai_server):
    loop = "Done.\n```bash\necho hi\n```\n" + "</final>" * 400
    openai_server.script(Turn(text=loop, chunks=200, usage=None))
    events = []
    model = _model(openai_server, ModelSpec(action_format="text"), stream_guard_enabled=True,
                   stream_guard_window=200, stream_guard_tag_threshold=10, usage_fallback="requery")
    response = model.query(TASK, emit=events.append)
    assert response.stream_guard_fired and response.message.extra.stream_guard
    assert response.message.content == "Done.\n```bash\necho hi\n```\n</final>"
    assert response.actions[0].command == "echo hi"
    assert response.usage.estimated  # no requery after the guard
    assert len(openai_server.requests) == 1
    assert len(_deltas(events, "text")) < 200


def test_invalid_json_arguments_are_a_format_error(openai_server):
    openai_server.script(Turn(tool_calls=[ToolCallSpec("bash", '{"command": "ls', chunks=3)], usage=Usage(5, 5)))
    with pytest.raises(FormatError) as caught:
        _model(openai_server, format_error_template="FORMAT: {{ error }}").query(TASK)
    assert caught.value.error.startswith("FORMAT: ") and "not valid JSON" in caught.value.error
    assert caught.value.message.tool_calls[0].function.arguments == '{"command": "ls'
    assert caught.value.usage.prompt_tokens == 5


@pytest.mark.parametrize("call, problem", [
    (ToolCallSpec("python", {"command": "ls"}), "unknown tool"),
    (ToolCallSpec("bash", {"cmd": "ls"}), "no `command`"),
])
def test_unknown_tool_and_missing_command_are_format_errors(openai_server, call, problem):
    openai_server.script(Turn(tool_calls=[call], usage=Usage(5, 5)))
    with pytest.raises(FormatError, match=problem):
        _model(openai_server).query(TASK)


def test_reasoning_required(openai_server):
    openai_server.script(
        Turn(tool_calls=[ToolCallSpec("bash", {"reasoning": "look first", "command": "ls"})], usage=Usage(5, 5)),
        Turn(tool_calls=[ToolCallSpec("bash", {"reasoning": "  ", "command": "ls"})], usage=Usage(5, 5)),
        Turn(tool_calls=[ToolCallSpec("bash", {"command": "ls"})], usage=Usage(5, 5)),
    )
    model = _model(openai_server, require_reasoning=True, tool_choice="required")
    assert model.query(TASK).actions[0].reasoning == "look first"
    for _ in range(2):
        with pytest.raises(FormatError, match="reasoning"):
            model.query(TASK)
    sent = openai_server.requests[0]
    assert sent["tool_choice"] == "required"
    parameters = sent["tools"][0]["function"]["parameters"]
    assert parameters["required"] == ["reasoning", "command"] and list(parameters["properties"]) == ["reasoning", "command"]


@pytest.mark.parametrize("fence", ["bash", "sh", "mswea_bash_command"])
def test_text_format_one_fenced_block(openai_server, fence):
    openai_server.script(Turn.bash_text("ls -la\npwd", fence=fence, usage=Usage(5, 5)))
    response = _model(openai_server, ModelSpec(action_format="text")).query(TASK)
    assert response.actions[0].command == "ls -la\npwd"
    assert "tools" not in openai_server.requests[0]


@pytest.mark.parametrize("text", ["no block here", "```bash\nls\n```\nand\n```bash\npwd\n```"])
def test_text_format_zero_or_two_blocks_are_format_errors(openai_server, text):
    openai_server.script(Turn(text=text, usage=Usage(5, 5)))
    with pytest.raises(FormatError, match="exactly one"):
        _model(openai_server, ModelSpec(action_format="text")).query(TASK)


def test_openai_prefix_works_without_a_configured_key(openai_server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    openai_server.script(Turn.bash_tool("ls", usage=Usage(5, 5)))
    model = _model(openai_server, provider="openai", name="my-local")
    assert model.query(TASK).actions[0].command == "ls"
    assert openai_server.requests[0]["model"] == "my-local"
    assert openai_server.request_headers[0].get("Authorization") == f"Bearer {DUMMY_API_KEY}"


def test_hosted_vllm_prefix_hits_the_server(openai_server):
    openai_server.script(Turn.bash_tool("ls", usage=Usage(5, 5)))
    _model(openai_server, name="Qwen/Qwen3-Coder").query(TASK)
    assert openai_server.requests[0]["model"] == "Qwen/Qwen3-Coder"
    assert openai_server.paths[0] == "/v1/chat/completions"


@pytest.mark.parametrize("stream_process", [True, False], ids=["stream-process", "in-thread"])
def test_cancel_mid_stream_returns_promptly(openai_server, stream_process):
    openai_server.script(Turn(text="word " * 200, chunks=200, chunk_delay_s=0.05, usage=Usage(5, 5)))
    model = _model(openai_server, stream_process=stream_process)
    events = []
    first_delta = threading.Event()

    def emit(event):
        events.append(event)
        if isinstance(event, StreamDelta):
            first_delta.set()

    def cancel_soon():
        first_delta.wait(10)
        model.cancel()

    threading.Thread(target=cancel_soon, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(QueryCancelled):
        model.query(TASK, emit=emit)
    assert time.monotonic() - started < 5  # safety net; the stream alone would take 10 s
    assert len(_deltas(events)) < 200
    deadline = time.monotonic() + 5
    while openai_server.client_disconnects == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert openai_server.client_disconnects == 1  # the HTTP stream was really closed


def test_cancel_during_backoff(openai_server):
    openai_server.script(Turn.rate_limited("30"))
    model = _model(openai_server)
    threading.Timer(0.3, model.cancel).start()
    with pytest.raises(QueryCancelled):
        model.query(TASK)
    assert len(openai_server.requests) == 1


def test_non_streaming_mode(openai_server):
    openai_server.script(Turn(text="plain", reasoning="why", tool_calls=[ToolCallSpec("bash", {"command": "ls"})],
                              usage=Usage(9, 3)))
    events = []
    response = _model(openai_server, use_streaming=False).query(TASK, emit=events.append)
    assert "stream" not in openai_server.requests[0] or openai_server.requests[0]["stream"] is False
    assert response.message.content == "plain" and response.message.extra.reasoning == "why"
    assert response.actions[0].command == "ls" and response.usage.prompt_tokens == 9
    assert [e.kind for e in _deltas(events)] == ["reasoning", "text", "tool_call"]


def test_cache_control_marks_only_the_last_message_on_a_copy(openai_server):
    from swedeck.core.models.cache_control import set_cache_control

    api = [m.to_api() for m in TASK] + [{"role": "tool", "tool_call_id": "a", "content": "out", "cache_control": {"type": "ephemeral"}}]
    marked = set_cache_control(api[:2], "default_end")
    assert marked[0]["content"] == "You are a helper."
    assert marked[1]["content"] == [{"type": "text", "text": "Fix it", "cache_control": {"type": "ephemeral"}}]
    assert api[1]["content"] == "Fix it"  # a copy
    moved = set_cache_control([api[2], api[1]], "default_end")
    assert "cache_control" not in moved[0] and moved[1]["content"][0]["cache_control"] == {"type": "ephemeral"}
    # End to end the request still goes out (litellm drops the marks for providers without caching).
    openai_server.script(Turn.bash_tool("ls", usage=Usage(5, 5)))
    assert _model(openai_server, set_cache_control="default_end").query(TASK).actions[0].command == "ls"


def test_unknown_price_default_raises_a_clear_error_ignore_errors_records_zero(openai_server):
    from swedeck.core.errors import SwedeckError

    openai_server.script(Turn.bash_tool("ls", usage=Usage(5, 5)), Turn.bash_tool("ls", usage=Usage(5, 5)))
    with pytest.raises(SwedeckError, match="model.cost_tracking=ignore_errors"):
        _model(openai_server, provider="openai", cost_tracking="default").query(TASK)
    response = _model(openai_server, provider="openai", cost_tracking="ignore_errors").query(TASK)
    assert response.cost == 0.0 and response.message.extra.cost == 0.0


def test_self_hosted_models_cost_nothing_even_by_default(openai_server):
    openai_server.script(Turn.bash_tool("ls", usage=Usage(5, 5)))
    response = _model(openai_server, provider="hosted_vllm", cost_tracking="default").query(TASK)
    assert response.cost == 0.0


def test_requery_counts_both_calls_in_the_cost(openai_server):
    openai_server.script(Turn.bash_tool("ls", usage=None), Turn.bash_tool("ls", usage=Usage(1000, 100)),
                         Turn.bash_tool("ls", usage=Usage(1000, 100)))
    config = dict(provider="openai", name="gpt-4o", cost_tracking="default")
    requeried = _model(openai_server, usage_fallback="requery", **config).query(TASK)
    single = _model(openai_server, **config).query(TASK)
    assert single.cost > 0
    assert requeried.cost == pytest.approx(2 * single.cost)


def test_a_model_priced_in_the_config_costs_what_the_config_says_live(openai_server):
    """Issue 65: `model.prices` prices a live call as the cost reports price it, over litellm's
    map: a self-hosted model given a price is no longer free, and the cost limit holds for it."""
    openai_server.script(Turn.bash_tool("ls", usage=Usage(1000, 100)), Turn.bash_tool("ls", usage=Usage(1000, 100)))
    priced = _model(openai_server, provider="hosted_vllm", cost_tracking="default",
                    name="local-model", prices={"local-model": {"input": 3.0, "output": 15.0}}).query(TASK)
    assert priced.cost == pytest.approx((1000 * 3.0 + 100 * 15.0) / 1e6)
    assert _model(openai_server, provider="hosted_vllm", cost_tracking="default").query(TASK).cost == 0.0


@pytest.mark.parametrize("stream_process", [True, False], ids=["stream-process", "in-thread"])
def test_the_default_max_tokens_is_lowered_to_the_models_own_limit(openai_server, stream_process):
    from swedeck.core.models.litellm_loader import litellm

    limit = litellm().get_model_info("openai/gpt-4")["max_output_tokens"]
    assert limit < 8192
    openai_server.script(Turn.bash_tool("ls"), Turn.bash_tool("ls"))
    _model(openai_server, name="gpt-4", provider="openai", stream_process=stream_process).query(TASK)
    assert openai_server.requests[0]["max_tokens"] == limit
    mine = _model(openai_server, name="gpt-4", provider="openai", stream_process=stream_process,
                  model_kwargs={"max_tokens": 20_000})
    mine.query(TASK)
    assert openai_server.requests[1]["max_tokens"] == 20_000  # the person's own value is theirs
