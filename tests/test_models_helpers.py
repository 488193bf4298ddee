"""Pure helpers of the model layer: retry waits, Retry-After, the stream guard's cut, usage records."""

from __future__ import annotations

import email.utils
import time

import pytest

from swedeck.core.models.retry import RETRY_AFTER_CAP_S, backoff_s, classify, parse_retry_after
from swedeck.core.models.stream_guard import StreamGuard
from swedeck.core.models.usage import usage_from


def test_retry_after_seconds_and_http_date():
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(" 0.5 ") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < parse_retry_after(future) <= 31
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert parse_retry_after(past) == 0.0


def test_backoff_grows_within_bounds_and_retry_after_is_capped():
    waits = [backoff_s(attempt, 1, 8) for attempt in range(1, 8)]
    assert all(1 <= w <= 8 for w in waits)
    assert waits[-1] == pytest.approx(8, rel=0.01) or waits[-1] >= 6
    assert backoff_s(1, 1, 8, retry_after_s=20) == 20  # the server's wish beats our maximum
    assert backoff_s(1, 1, 8, retry_after_s=10_000) == RETRY_AFTER_CAP_S


class _StatusError(Exception):
    def __init__(self, status):
        super().__init__(f"status {status}")
        self.status_code = status


@pytest.mark.parametrize("exc, kind", [
    (_StatusError(429), "transient"),
    (_StatusError(500), "transient"),
    (_StatusError(503), "transient"),
    (_StatusError(401), "auth"),
    (_StatusError(403), "auth"),
    (_StatusError(404), "fatal"),
    (_StatusError(400), "fatal"),
    (TimeoutError("slow"), "transient"),
    (ConnectionResetError("gone"), "transient"),
    (ValueError("bug"), "fatal"),
])
def test_classification(exc, kind):
    assert classify(exc).kind == kind


def test_context_length_message_is_its_own_kind():
    error = _StatusError(400)
    error.args = ("This model's maximum context length is 8192 tokens",)
    assert classify(error).kind == "context_window"


def test_guard_trips_on_many_closing_tags_in_the_window_and_cuts_the_loop():
    guard = StreamGuard(window=100, threshold=5)
    assert not guard.tripped("<a>x</a> <b>y</b>")
    looping = "answer\n</final>" + "</final>" * 10
    assert guard.tripped(looping)
    assert guard.cut(looping) == "answer\n</final>"
    block = "text <x>1</x>\n" + "<x>1</x>\n" * 8
    assert guard.cut(block).count("</x>") == 2  # the model's own tag and one copy of the unit


def test_usage_records():
    assert usage_from(None) is None
    assert usage_from({"prompt_tokens": 0, "completion_tokens": 0}) is None
    anthropic = usage_from({"prompt_tokens": 10, "completion_tokens": 2, "cache_read_input_tokens": 8})
    assert anthropic.cached_tokens == 8
    openai = usage_from({"prompt_tokens": 10, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 4}})
    assert openai.cached_tokens == 4 and not openai.estimated


def test_litellm_import_is_left_out_of_later_garbage_collections():
    # A full collection walks every tracked object with the GIL held; the import's million
    # objects live as long as the process, so they are frozen once loaded (bench B1).
    import subprocess
    import sys

    code = ("import gc; from swedeck.core.models.litellm_loader import litellm; before = gc.get_freeze_count(); "
            "litellm(); print(before, gc.get_freeze_count(), len(gc.get_objects()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    before, frozen, tracked = map(int, done.stdout.split())
    assert before == 0 and frozen > 200_000 and tracked < frozen // 10


def test_a_context_window_error_is_one_line_with_its_figures():
    """Issue 62: the context-exceeded dialog printed litellm's raw error over four lines."""
    from swedeck.core.models.retry import classify

    class ContextWindowExceededError(Exception):
        pass

    raw = ("litellm.ContextWindowExceededError: litellm.BadRequestError: ContextWindowExceededError: "
           "OpenAIException - This model's maximum context length is 8192 tokens. However, your messages resulted "
           "in 12000 tokens. Please reduce the length of the messages.\nmodel=gpt-4\nLiteLLM Retried: 0 times")
    problem = classify(ContextWindowExceededError(raw))
    assert problem.kind == "context_window" and "\n" not in problem.text
    assert problem.text == "the prompt is over the model's context window: 12,000 tokens where the model takes 8,192"
