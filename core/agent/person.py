"""The agent's channel to the person (SPEC §6.1, §10): requests and their answers.

The agent's thread asks (`ask` blocks until the front end resolves the request's future);
other threads settle or drop what is pending: switching away from human mode answers a
waiting command prompt with nothing, an interrupt fails a waiting confirmation, and a quit
closes the channel so that nothing waits again.
"""

from __future__ import annotations

import threading
from concurrent.futures import CancelledError, Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from .. import events as ev
from ..exit_status import ExitStatus
from .exits import QuitRequested, SessionEnd

Answer = TypeVar("Answer")


class PersonChannel:
    def __init__(self, emit: ev.EventSink, interactive: bool):
        self._emit = emit
        self.interactive = interactive
        """Someone answers (the live UI); False: headless, where every ending that would ask ends
        the session instead. The one place this is decided (`Agent.interactive` reads it)."""
        self._lock = threading.Lock()
        self._pending: dict[Future[Any], str] = {}
        """Unanswered requests and what each asks for (`ask`'s tag)."""
        self._closed = False

    def ask(self, request: type[ev.Request[Answer]], tag: str, **fields: Any) -> Answer:
        """Emit `request` and wait for its answer. Headless there is no one to ask: the session ends."""
        if not self.interactive:
            raise SessionEnd(ExitStatus.USER_QUIT, f"a person is needed ({tag}) but the session is headless")
        future: Future[Answer] = Future()
        with self._lock:
            if self._closed:
                raise QuitRequested()
            self._pending[future] = tag
        self._emit(request(future=future, **fields))
        try:
            while True:
                try:
                    return future.result(timeout=0.25)
                except FutureTimeout:
                    if self._closed:
                        raise QuitRequested() from None
        except CancelledError:
            raise QuitRequested() from None
        finally:
            with self._lock:
                self._pending.pop(future, None)

    def ask_text(self, kind: str, prompt: str) -> str | None:
        text = self.ask(ev.InputRequested, kind, kind=kind, prompt=prompt)
        return text.strip() if text is not None else None

    def settle(self, tag: str, *, answer: Any = None, error: BaseException | None = None) -> None:
        """Answer (or fail with `error`) the pending requests tagged `tag`; from any thread."""
        with self._lock:
            waiting = [future for future, pending_tag in self._pending.items() if pending_tag == tag]
        for future in waiting:
            if future.done():
                continue
            try:
                if error is not None:
                    future.set_exception(error)
                else:
                    future.set_result(answer)
            except InvalidStateError:  # the front end answered it in between: that answer stands
                pass

    def close(self) -> None:
        """Nothing waits any more: every pending request is cancelled, and later ones refused."""
        with self._lock:
            self._closed = True
            pending = list(self._pending)
        for future in pending:
            future.cancel()
