"""The scripted OpenAI-compatible server itself (tests/support/openai_server.py), over real HTTP."""

from __future__ import annotations

import json

import httpx
import pytest

from support.openai_server import ToolCallSpec, Turn, Usage, model_config, openai_server  # noqa: F401


def _events(response: httpx.Response) -> list[dict]:
    out = []
    for line in response.iter_lines():
        if line.startswith("data: ") and line != "data: [DONE]":
            out.append(json.loads(line[6:]))
    return out


def test_streams_text_tool_calls_and_a_usage_chunk(openai_server):
    openai_server.script(Turn(text="Let me look", tool_calls=[ToolCallSpec("bash", {"command": "ls"})], usage=Usage(100, 20, 7)))
    body = {"model": "m", "stream": True, "stream_options": {"include_usage": True}, "messages": []}
    with httpx.stream("POST", openai_server.url + "/chat/completions", json=body) as response:
        events = _events(response)
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events if e["choices"])
    arguments = "".join(
        call["function"].get("arguments", "")
        for e in events
        if e["choices"]
        for call in e["choices"][0]["delta"].get("tool_calls") or []
    )
    assert text == "Let me look"
    assert json.loads(arguments) == {"command": "ls"}
    assert events[-1]["choices"] == []
    assert events[-1]["usage"]["prompt_tokens_details"]["cached_tokens"] == 7
    assert openai_server.requests == [body]


def test_non_streaming_error_and_drop(openai_server):
    openai_server.script(Turn.rate_limited("3"), Turn(text="done", usage=Usage(1, 2)), Turn(text="abcdef", drop_after=2))
    first = httpx.post(openai_server.url + "/chat/completions", json={})
    assert first.status_code == 429 and first.headers["retry-after"] == "3"
    second = httpx.post(openai_server.url + "/chat/completions", json={})
    assert second.json()["choices"][0]["message"]["content"] == "done"
    with pytest.raises(httpx.RemoteProtocolError):
        with httpx.stream("POST", openai_server.url + "/chat/completions", json={"stream": True}) as response:
            _events(response)
    assert openai_server.pending == 0


def test_text_turn_and_model_config(openai_server):
    turn = Turn.bash_text("ls -la")
    assert "```bash\nls -la\n```" in turn.text
    config = model_config(openai_server, "qwen")
    assert config.model_name == "hosted_vllm/qwen"
    assert config.model_kwargs["api_base"] == openai_server.url
