"""Which query errors are worth another try, and how long to wait (SPEC §4.3).

Retries are ours, not the SDK's (`max_retries=0` is passed), so the UI can show them.
Classification goes by HTTP status when the error carries one, else by the kind of
failure (timeouts and broken connections are transient).
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from dataclasses import dataclass
from typing import Any, Literal

Kind = Literal["transient", "context_window", "auth", "fatal"]
"""`auth`: missing or refused credentials, whatever status litellm wrapped them in: never retried."""

RETRY_AFTER_CAP_S = 300.0
"""A server asking for a longer pause than this is not waited for beyond it."""

_TRANSIENT_STATUS = {408, 409, 425, 429}
_TRANSIENT_NAMES = (
    "Timeout",
    "APITimeoutError",
    "APIConnectionError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "BadGatewayError",
    "RemoteProtocolError",
    "ReadError",
    "ConnectError",
    "ReadTimeout",
    "ConnectTimeout",
    "TimeoutException",
    "TransportError",
)
_CREDENTIAL_MARKERS = re.compile(
    r"missing credentials|missing [\w ]{0,20}api[ _-]?key|(incorrect|invalid|no) api[ _-]?key|invalid_api_key"
    r"|api[ _-]?key (is )?(not (set|found|provided)|missing)|no key is set|authenticationerror|unauthorized",
    re.IGNORECASE)
_CONTEXT_MARKERS = ("context_length_exceeded", "maximum context length", "context window", "too many tokens", "prompt is too long")


@dataclass(frozen=True)
class Classified:
    kind: Kind
    status: int | None
    retry_after_s: float | None
    text: str
    tries: int | None = None
    """At most this many tries in all, whatever `model.retry.attempts` says (None: those)."""


REFUSED_TRIES = 2
"""A refused connection is tried again once, briefly: nothing listens there, and waiting 30 s
over five tries only delays saying so."""
_REFUSED = re.compile(r"connection refused|errno 111\b|econnrefused|cannot connect to host|all connection attempts failed",
                      re.IGNORECASE)


class StreamCut(ConnectionError):
    """The stream ended before the answer did: no chunk said `finish_reason`. Whatever
    closed it (a proxy, a dropped connection), it is a broken connection to retry, never a
    complete answer (SPEC §13 R2)."""

    def __init__(self) -> None:
        super().__init__("the stream ended without a finish_reason (the connection was cut mid-answer)")


class StreamStalled(ConnectionError):
    """The stream stayed open but added nothing for `model.stall_timeout_s`: a cut stream."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the stream made no progress for {seconds:g} s (empty deltas or keep-alive pings only)")


class NotACompletion(ConnectionError):
    """A 200 answer that is no completion (an HTML error page from a proxy): retried."""

    def __init__(self) -> None:
        super().__init__("the provider answered 200 with something that is not a completion")


class RemoteQueryError(Exception):
    """A query error classified where it happened (the stream process), sent here as such."""

    def __init__(self, classified: Classified):
        super().__init__(classified.text)
        self.classified = classified


def classify(exc: BaseException) -> Classified:
    if isinstance(exc, RemoteQueryError):
        return exc.classified
    refused = _refused(exc)
    if refused is not None:  # litellm names it InternalServerError (500): it is nothing listening
        return Classified("transient", None, None, refused, tries=REFUSED_TRIES)
    status = _status(exc)
    text = _describe(exc, status)
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "ContextWindowExceededError" in names or (status in (400, 413, None) and _mentions_context(exc)):
        return Classified("context_window", status, None, _context_words(str(exc)))
    if status in (401, 403) or "AuthenticationError" in names or _CREDENTIAL_MARKERS.search(str(exc)):
        return Classified("auth", status, None, text)
    if status is not None:
        # a "200" error is an answer that was no completion (a proxy's page): try again
        transient = status in _TRANSIENT_STATUS or status >= 500 or status < 400
        return Classified("transient" if transient else "fatal", status, _retry_after(exc), text)
    if names & set(_TRANSIENT_NAMES) or isinstance(exc, (ConnectionError, TimeoutError)):
        return Classified("transient", None, _retry_after(exc), text)
    return Classified("fatal", None, None, text)


def with_credential_hint(problem: Classified, litellm: Any, model: str) -> Classified:
    """An auth problem told in one line, with the variables litellm reads for `model`."""
    if problem.kind != "auth":
        return problem
    try:
        missing = list(litellm.validate_environment(model).get("missing_keys") or [])
    except Exception:  # noqa: BLE001 - an unknown provider: the provider's own words must do
        missing = []
    what = f"set {' or '.join(missing)}" if missing else "check the API key (model.model_kwargs.api_key or the provider's variable)"
    said = problem.text if len(problem.text) <= 160 else problem.text[:157] + "..."
    return Classified("auth", problem.status, None, f"no valid credentials for {model}: {what} ({said})")


def backoff_s(attempt: int, low: float, high: float, retry_after_s: float | None = None) -> float:
    """The wait after failed attempt `attempt` (1-based): exponential with jitter, or Retry-After."""
    if retry_after_s is not None:
        return max(0.0, min(retry_after_s, RETRY_AFTER_CAP_S))
    base = min(high, low * 2 ** (attempt - 1))
    return float(max(low, min(high, base * random.uniform(0.75, 1.25))))


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` as seconds: a number, or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _status(exc: BaseException) -> int | None:
    for candidate in (getattr(exc, "status_code", None), getattr(getattr(exc, "response", None), "status_code", None)):
        if isinstance(candidate, int) and 100 <= candidate < 600:
            return candidate
    return None


def _headers(exc: BaseException) -> dict[str, str]:
    headers: dict[str, str] = {}
    for source in (getattr(getattr(exc, "response", None), "headers", None), getattr(exc, "litellm_response_headers", None)):
        try:
            headers.update({str(k).lower(): str(v) for k, v in dict(source or {}).items()})
        except (TypeError, ValueError):
            continue
    return headers


def _retry_after(exc: BaseException) -> float | None:
    headers = _headers(exc)
    seconds = parse_retry_after(headers.get("retry-after"))
    if seconds is None and headers.get("retry-after-ms"):
        try:
            seconds = float(headers["retry-after-ms"]) / 1000
        except ValueError:
            seconds = None
    return seconds


def _mentions_context(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(marker in text for marker in _CONTEXT_MARKERS)


_CONTEXT_NUMBERS = re.compile(r"maximum context length is (\d+) tokens.*?(\d+) tokens|(\d+) tokens > (\d+) maximum",
                              re.IGNORECASE | re.DOTALL)
_WRAPPERS = re.compile(r"(?:litellm\.)?\w*(?:Error|Exception):\s*")


def _context_words(raw: str) -> str:
    """One line for a prompt over the window, with the figures when the provider gives them
    (litellm's error repeats its wrappers' names over several lines)."""
    numbers = _CONTEXT_NUMBERS.search(raw)
    figures = ""
    if numbers and numbers.group(1):
        figures = f": {int(numbers.group(2)):,} tokens where the model takes {int(numbers.group(1)):,}"
    elif numbers:
        figures = f": {int(numbers.group(3)):,} tokens where the model takes {int(numbers.group(4)):,}"
    said = " ".join(_WRAPPERS.sub("", raw).split())
    return ("the prompt is over the model's context window" + figures
            + (f" (the provider: {said[:160]}{'…' if len(said) > 160 else ''})" if said and not figures else ""))


def _refused(exc: BaseException) -> str | None:
    """One line for a refused connection (anywhere in the error's chain), naming where, or None."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError) or _REFUSED.search(str(seen)):
            where = re.search(r"(?:https?://)?(?:\[[0-9a-f:]+\]|[\w.-]+):\d+", str(exc)) or re.search(
                r"(?:https?://)?(?:\[[0-9a-f:]+\]|[\w.-]+):\d+", str(seen))
            return ("connection refused: nothing answers at " + where.group() if where
                    else "connection refused: nothing answers at the model's address") + " (is the server running?)"
        seen = seen.__cause__ or seen.__context__
    return None


def _describe(exc: BaseException, status: int | None) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if len(text) > 500:
        text = text[:500] + "…"
    prefix = f"{type(exc).__name__}" + (f" ({status})" if status else "")
    return f"{prefix}: {text}"
