"""The litellm model (SPEC §4.1-4.4): streaming, tool calls, usage, cost, our own retries.

Each attempt runs the HTTP call elsewhere, in the stream process (`stream_process`, the
default) or in a thread (`http_call.run_call`); either feeds chunks into a queue, and the
query thread reads the queue, emits deltas and applies the stream guard. `cancel()` puts
a sentinel in that queue and closes the HTTP stream, so the query returns at once even
while the request waits for headers or the retry waits out its backoff.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from ..actions import ToolSchema
from ..config import ModelConfig
from ..events import EventSink, QueryRetrying
from ..messages import FunctionCall, Message, ModelStats, ToolCall, valid_text
from .assembler import Assembler, _get
from .base import APIError, ContextWindowExceeded, ModelResponse, ModelSpec, QueryCancelled, Shape, TextAnswer
from .cache_control import request_messages
from .http_call import CANCEL, DEFAULT_MAX_TOKENS, END, ERROR, Call, provider_usage, run_call
from .litellm_loader import litellm
from .responses import Parts, build_response
from .retry import (
    NotACompletion,
    RemoteQueryError,
    StreamCut,
    StreamStalled,
    backoff_s,
    classify,
    with_credential_hint,
)
from .stream_guard import StreamGuard
from .stream_process import stream_process
from .usage import compute_cost, estimate_usage, usage_from

DUMMY_API_KEY = "swedeck-no-key"
"""openai-compatible servers without auth still need the SDK to have some key."""


class _Cancelled(Exception):
    pass


class LitellmModel:
    def __init__(self, config: ModelConfig, spec: ModelSpec | None = None):
        self.config = config
        self.spec = spec or ModelSpec()
        self.model_name = config.model_name or ""
        self.stats = ModelStats()
        self._lock = threading.Lock()
        self._call: Call | None = None
        self._cancelled = threading.Event()
        if config.stream_process:
            stream_process().warm_up()  # it imports litellm while the session sets up the rest

    # --- the contract ---------------------------------------------------------------------

    def query(self, messages: list[Message], *, step: int = 0, emit: EventSink | None = None) -> ModelResponse:
        parts = self._answer(messages, step, emit, Shape())
        return build_response(parts, self.spec, self.config.require_reasoning, self.config.format_error_template)

    def complete(self, messages: list[Message], *, max_tokens: int | None = None) -> TextAnswer:
        """A plain answer to `messages`: no tools, no command read from it (a compaction's summary).
        Retried, cancelable and counted in `stats` as a query is."""
        parts = self._answer(messages, 0, None, Shape(tools=False, max_tokens=max_tokens))
        return TextAnswer(text=parts.content, usage=parts.usage, cost=parts.cost)

    def _answer(self, messages: list[Message], step: int, emit: EventSink | None, shape: Shape) -> Parts:
        self._cancelled.clear()
        attempts = self.config.retry.attempts
        for attempt in range(1, attempts + 1):
            try:
                parts, calls = self._attempt(messages, step, emit, shape)
                break
            except _Cancelled:
                raise QueryCancelled() from None
            except Exception as exc:  # noqa: BLE001 - classified below: everything an SDK can raise
                problem = classify(exc)
                if problem.kind == "context_window":
                    raise ContextWindowExceeded(problem.text) from None
                if problem.kind == "auth" and not isinstance(exc, RemoteQueryError):
                    problem = with_credential_hint(problem, litellm(), self.model_name)  # in-thread: litellm is here
                if problem.kind in ("fatal", "auth"):
                    raise APIError(problem.text, retryable=False, attempts=attempt) from None
                if "at the model's address" in problem.text:  # say which: the address the query went to
                    where = self.config.model_kwargs.get("api_base") or self.config.model_kwargs.get("base_url")
                    if isinstance(where, str) and where:
                        problem = dataclasses.replace(problem, text=problem.text.replace("the model's address", where))
                allowed = min(attempts, problem.tries or attempts)
                if attempt >= allowed:
                    raise APIError(f"{problem.text} (gave up after {attempt} tries)", retryable=True, attempts=attempt) from None
                wait = backoff_s(attempt, self.config.retry.backoff_min_s, self.config.retry.backoff_max_s, problem.retry_after_s)
                if problem.tries is not None:
                    wait = min(wait, 1.0)  # briefly: see `REFUSED_TRIES`
                if emit is not None:
                    emit(QueryRetrying(step=step, attempt=attempt, attempts=allowed, wait_s=wait, error=problem.text))
                if self._cancelled.wait(wait):
                    raise QueryCancelled() from None
        # A usage requery is a second, billed completion of the same prompt.
        parts.cost = compute_cost(self.model_name, parts.usage, self.config.cost_tracking, self.config.prices) * calls
        self.stats.add(parts.cost, parts.usage, calls)
        return parts

    def cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.items.put((CANCEL, None))
            call.close()

    # --- one attempt ----------------------------------------------------------------------

    def _attempt(self, messages: list[Message], step: int, emit: EventSink | None,
                 shape: Shape) -> tuple[Parts, int]:
        """The response parts and the number of API calls made (2 after a usage requery)."""
        if not self.config.use_streaming:
            return self._complete(messages, step, emit, shape), 1
        assembler = Assembler(step=step, emit=emit)
        guard = self._guard()
        fired = False
        call = self._start(self.request(messages, stream=True, shape=shape))
        stall = _Stall(self.config.stall_timeout_s, self.config.timeout_s)
        for item in _items(call, stall):
            stall.item()
            before = assembler.received
            added = assembler.feed(item)
            if assembler.received > before:
                stall.progress()
            if guard is not None and guard.may_trip(added) and guard.tripped(assembler.tail(guard.window)):
                fired = True
                assembler.replace_text(guard.cut(assembler.text))
                call.close()
                break
        self._finish(call)
        if not fired and call.finished is False:
            raise StreamCut()  # ended, but the provider never said the answer was complete
        parts = Parts(
            content=assembler.text,
            reasoning=assembler.reasoning_text,
            tool_calls=assembler.tool_calls(),
            usage=usage_from(provider_usage(call.stream, assembler.usage)),
            stream_guard_fired=fired,
            finish_reason=call.finish_reason,
        )
        calls = 1
        if parts.usage is None:
            calls += self._fallback_usage(parts, messages, shape, guard_fired=fired)
        return parts, calls

    def _complete(self, messages: list[Message], step: int, emit: EventSink | None, shape: Shape) -> Parts:
        response = self._run(self.request(messages, stream=False, shape=shape))
        choices = _get(response, "choices") or []
        message = _get(choices[0], "message") if choices else None
        if message is None:
            raise NotACompletion()
        content = valid_text(_get(message, "content") or "")
        reasoning = valid_text(_get(message, "reasoning_content") or "")
        tool_calls = tuple(
            ToolCall(
                id=_get(call, "id") or f"call_{index}",
                function=FunctionCall(
                    name=_get(_get(call, "function"), "name") or "",
                    arguments=valid_text(_get(_get(call, "function"), "arguments") or ""),
                ),
            )
            for index, call in enumerate(_get(message, "tool_calls") or ())
        )
        # One delta per part, so front ends draw non-streamed answers the same way.
        assembler = Assembler(step=step, emit=emit)
        if reasoning:
            assembler._send("reasoning", reasoning)
        if content:
            assembler._send("text", content)
        for index, call in enumerate(tool_calls):
            assembler._send("tool_call", call.function.arguments, index=index, name=call.function.name)
        parts = Parts(content=content, reasoning=reasoning, tool_calls=tool_calls, usage=usage_from(_get(response, "usage")))
        if parts.usage is None and self.config.usage_fallback == "estimate":
            parts.usage = estimate_usage(messages, _response_text(parts))
        return parts

    def _fallback_usage(self, parts: Parts, messages: list[Message], shape: Shape, guard_fired: bool) -> int:
        mode = self.config.usage_fallback
        if mode == "estimate" or guard_fired:  # §4.4: a guarded stream is estimated, never requeried
            parts.usage = estimate_usage(messages, _response_text(parts))
        elif mode == "requery":
            response = self._run(self.request(messages, stream=False, shape=shape))
            parts.usage = usage_from(_get(response, "usage")) or estimate_usage(messages, _response_text(parts))
            return 1
        return 0

    def _guard(self) -> StreamGuard | None:
        if not self.config.stream_guard_enabled:
            return None
        return StreamGuard(self.config.stream_guard_window, self.config.stream_guard_tag_threshold)

    # --- the request ----------------------------------------------------------------------

    def request(self, messages: list[Message], *, stream: bool, shape: Shape | None = None) -> dict[str, Any]:
        """The keyword arguments of `litellm.completion` for `messages`."""
        config = self.config
        shape = shape or Shape()
        kwargs: dict[str, Any] = {key: value for key, value in config.model_kwargs.items() if key != "tokens_per_second"}
        api_messages = request_messages(messages, config.set_cache_control)
        kwargs.update(model=self.model_name, messages=api_messages, max_retries=0, timeout=config.timeout_s)
        if shape.max_tokens:
            kwargs["max_tokens"] = shape.max_tokens
        elif config.max_tokens and not {"max_tokens", "max_completion_tokens"} & set(kwargs):
            kwargs["max_tokens"] = config.max_tokens
            kwargs[DEFAULT_MAX_TOKENS] = True  # lowered to the model's limit where litellm runs
        if stream:
            kwargs["stream"] = True
            if config.stream_include_usage:
                kwargs["stream_options"] = {"include_usage": True}
        if self.spec.action_format != "text" and shape.tools:
            require = config.require_reasoning or self.spec.require_reasoning
            kwargs["tools"] = [*ToolSchema(require).tools(), *self.spec.extra_tools]
            if config.tool_choice is not None:
                kwargs["tool_choice"] = config.tool_choice
        if self.model_name.startswith("openai/") and kwargs.get("api_base") and not kwargs.get("api_key"):
            if not os.environ.get("OPENAI_API_KEY"):
                kwargs["api_key"] = DUMMY_API_KEY
        return kwargs

    # --- the call, in the stream process or a thread ------------------------------------

    def _start(self, kwargs: dict[str, Any]) -> Call:
        call = Call(items=queue.SimpleQueue())
        with self._lock:
            self._call = call
        if self._cancelled.is_set():
            raise _Cancelled()
        if self.config.stream_process and stream_process().start(kwargs, call):
            return call
        module = litellm()  # import here, in the query thread, not in a worker racing it
        put = call.items.put
        threading.Thread(target=run_call, args=(module, kwargs, call, lambda kind, item: put((kind, item))),
                         name="swedeck-model-call", daemon=True).start()
        return call

    def _run(self, kwargs: dict[str, Any]) -> Any:
        """A non-streaming call: its response, cancelable."""
        call = self._start(kwargs)
        items = list(_items(call))  # one response (a non-streaming call yields just that)
        self._finish(call)
        return items[-1] if items else None

    def _finish(self, call: Call) -> None:
        with self._lock:
            if self._call is call:
                self._call = None
        if self._cancelled.is_set():
            raise _Cancelled()


def _response_text(parts: Parts) -> str:
    calls = " ".join(call.function.name + call.function.arguments for call in parts.tool_calls)
    return " ".join(text for text in (parts.reasoning, parts.content, calls) if text)


class _Stall:
    """When a stream last made progress; `limit_s` of none is a stalled stream (0: no limit).
    The clock starts at the stream's first chunk: the wait for it (litellm's first import,
    the provider's time to the first token) is the request's own `timeout_s`."""

    def __init__(self, limit_s: float, first_s: float):
        self.limit_s = limit_s
        self._first_s = max(limit_s, first_s)
        self._began = False
        self._last = time.monotonic()

    def item(self) -> None:
        if not self._began:
            self._began, self._last = True, time.monotonic()

    def progress(self) -> None:
        self._last = time.monotonic()

    def wait_s(self) -> float | None:
        """How long the next item may take, or None (no limit); raises when that is over."""
        if not self.limit_s:
            return None
        limit = self.limit_s if self._began else self._first_s
        left = self._last + limit - time.monotonic()
        if left <= 0:
            raise StreamStalled(limit)
        return left


def _items(call: Call, stall: _Stall | None = None) -> Iterator[Any]:
    """What the call's thread produces, until its end; its error or a cancel is raised here,
    and a stream that adds nothing for `stall`'s limit ends as `StreamStalled` (closed)."""
    while True:
        try:
            kind, item = call.items.get(timeout=stall.wait_s() if stall is not None else None)
        except queue.Empty:
            call.close()
            assert stall is not None
            stall.wait_s()  # raises with the limit that ran out
            raise StreamStalled(stall.limit_s) from None
        except StreamStalled:
            call.close()
            raise
        if kind == CANCEL:
            raise _Cancelled()
        if kind == ERROR:
            raise item
        if kind == END:
            return
        yield item
