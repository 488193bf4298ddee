"""One litellm call, run in a thread: what it yields goes to `put`, a cancel closes its
HTTP response. The query thread runs it (`model.stream_process: false`), or the stream
process does (`stream_worker`) and sends the chunks over a pipe."""

from __future__ import annotations

import queue
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .assembler import _get

CHUNK, END, ERROR, CANCEL = "chunk", "end", "error", "cancel"
Put = Callable[[str, Any], None]

_CHUNKS_KEPT = 8
_CHUNKS_TRIM_AT = 256
_RESPONSE_ATTRS = ("http_response", "response", "streaming_response", "response_iterator", "completion_stream")


@dataclass
class Call:
    """One HTTP call running in a worker thread."""

    items: queue.SimpleQueue[Any]
    stream: Any = None
    stop: bool = False
    on_close: Callable[[], object] | None = None
    """Set when another process runs the call: how to tell it to stop."""
    finished: bool | None = None
    """At the end of a stream: whether the provider ended the answer (sent a finish_reason);
    None when that cannot be told."""
    finish_reason: str | None = None
    """What the provider said (`stop`, `tool_calls`, `length`: the answer hit max_tokens)."""

    def close(self) -> None:
        self.stop = True
        if self.on_close is not None:
            self.on_close()
            return
        # The httpx response sits at different depths depending on the provider's handler;
        # for openai-compatible ones only inside the generator litellm reads lines from.
        inner = getattr(self.stream, "completion_stream", None)
        for target in (inner, self.stream):
            response = find_http_response(target)
            if response is not None:
                try:
                    response.close()
                except Exception:  # noqa: BLE001 - closing a stream another thread reads may complain; it is closed
                    pass
                return


def find_http_response(obj: Any, depth: int = 4) -> Any:
    """The httpx-like response (has `close` and `is_closed`) behind a stream wrapper, or None."""
    if obj is None or depth < 0:
        return None
    if callable(getattr(obj, "close", None)) and hasattr(obj, "is_closed") and hasattr(obj, "status_code"):
        return obj
    frame = getattr(obj, "gi_frame", None)
    candidates = list(frame.f_locals.values()) if frame is not None else []
    candidates += [getattr(obj, name, None) for name in _RESPONSE_ATTRS]
    for candidate in candidates:
        found = find_http_response(candidate, depth - 1)
        if found is not None:
            return found
    return None


def run_call(module: Any, kwargs: dict[str, Any], call: Call, put: Put) -> None:
    """The body of the call's thread: `put(CHUNK, chunk)`... then `put(END, None)`, or
    `put(ERROR, exception)`. A non-streaming call puts its whole response as one chunk."""
    try:
        kwargs = fit_max_tokens(module, kwargs)
        result = module.completion(**kwargs)
        call.stream = result
        if not kwargs.get("stream"):
            put(CHUNK, result)
            put(END, None)
            return
        if call.stop:
            call.close()
            return
        for chunk in result:
            put(CHUNK, chunk)
            if call.stop:
                break
            trim_kept_chunks(result)
        call.finished = stream_finished(result)
        call.finish_reason = getattr(result, "received_finish_reason", None) or getattr(
            result, "intermittent_finish_reason", None)
        put(END, None)
    except BaseException as exc:  # noqa: BLE001 - handed to the query thread, which classifies it
        put(ERROR, exc)


def trim_kept_chunks(stream: Any) -> None:
    """Let go of the chunks litellm keeps for its own end-of-stream bookkeeping.

    litellm holds every chunk of a stream (a small object graph per token) until the stream
    ends. Every full garbage collection walks them, with the GIL held, so the UI stalled
    longer and longer as a long answer streamed (bench B1; figures in docs/performance.md). Kept: the last few (litellm compares the last two to detect a looping model)
    and any carrying usage (`provider_usage` reads those). swedeck takes text, tool calls
    and usage from the chunks as they pass; what litellm rebuilds from its list at the end
    (its own usage estimate, logging) is not used.
    """
    chunks = getattr(stream, "chunks", None)
    if not isinstance(chunks, list) or len(chunks) < _CHUNKS_TRIM_AT:
        return
    older = chunks[:-_CHUNKS_KEPT]
    chunks[:] = [chunk for chunk in older if _get(chunk, "usage") is not None] + chunks[-_CHUNKS_KEPT:]


DEFAULT_MAX_TOKENS = "swedeck_default_max_tokens"
"""Marks a `max_tokens` that is swedeck's default (not the person's): it may be lowered."""


def fit_max_tokens(module: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments with swedeck's default `max_tokens` no higher than the model's own
    output limit (a provider refuses more), when litellm knows the model."""
    kwargs = dict(kwargs)
    if not kwargs.pop(DEFAULT_MAX_TOKENS, False):
        return kwargs
    try:
        limit = (module.get_model_info(kwargs["model"]) or {}).get("max_output_tokens")
    except Exception:  # noqa: BLE001 - a model litellm does not know: the default stands
        limit = None
    if isinstance(limit, int) and 0 < limit < kwargs["max_tokens"]:
        kwargs["max_tokens"] = limit
    return kwargs


def stream_finished(stream: Any) -> bool | None:
    """Whether the provider said the answer was complete (a `finish_reason`).

    litellm ends every stream with a chunk that has one, making one up ("stop") when the
    provider sent none, as when a proxy closed the connection mid-answer; only its record
    of what the provider sent (`received_finish_reason`, or `intermittent_finish_reason`
    for providers that send it before the last chunk) tells them apart. None: not litellm's
    stream wrapper, so nothing to tell (tests/test_models_litellm.py pins the attributes)."""
    if not hasattr(stream, "received_finish_reason"):
        return None
    return bool(stream.received_finish_reason or getattr(stream, "intermittent_finish_reason", None))


def provider_usage(stream: Any, last_seen: Any) -> Any:
    """The usage the provider sent, if any. litellm answers a missing usage chunk with its
    own count in the last chunk; only its record of the raw chunks tells them apart."""
    chunks = getattr(stream, "chunks", None)
    if not isinstance(chunks, list):
        return last_seen
    for chunk in reversed(chunks):
        usage = _get(chunk, "usage")
        if usage is not None:
            return usage
    return None
