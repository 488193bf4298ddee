"""A scripted person for agent tests: it answers the agent's requests the way a front end
does (resolving the request's future), and records every event. This is the real core
API; only the human is scripted."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from swedeck.core import events as ev
from swedeck.core.config import SwedeckConfig, load_config
from swedeck.core.session import Session, SessionResult


class Driver:
    def __init__(
        self,
        decisions: Iterable[ev.Decision] = (),
        inputs: Iterable[str | None] = (),
        pauses: Iterable[ev.PauseDecision] = (),
        on_event: Callable[[Driver, ev.Event], None] | None = None,
    ):
        self.decisions = list(decisions)
        self.inputs = list(inputs)
        self.pauses = list(pauses)
        self.on_event = on_event
        self.events: list[ev.Event] = []
        self.requests: list[ev.Request[Any]] = []
        self.session: Session | None = None

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(self, event)
        if not isinstance(event, ev.Request):
            return
        self.requests.append(event)
        if event.future.done():  # answered already (e.g. a mode switch released a human-mode prompt)
            return
        if isinstance(event, ev.ConfirmationRequested):
            if self.decisions:
                event.future.set_result(self.decisions.pop(0))
        elif isinstance(event, ev.InputRequested):
            event.future.set_result(self.inputs.pop(0) if self.inputs else None)
        elif isinstance(event, ev.PauseRequested):
            event.future.set_result(self.pauses.pop(0) if self.pauses else ev.PauseDecision("quit"))

    def of(self, kind: type) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]

    def later(self, action: Callable[[], None]) -> None:
        """Do something from another thread, as a UI would (e.g. interrupt)."""
        threading.Timer(0.05, action).start()


def make_config(tmp_path: Path, model: Any, *specs: str, env: Literal["local", "docker"] = "local",
                **fields: Any) -> SwedeckConfig:
    """The shipped default with the scripted model, commands in `tmp_path`, output in `tmp_path`."""
    config = load_config(list(specs), environ={})
    config.model = model
    config.environment.environment_class = env
    if env == "local":
        config.environment.cwd = str(tmp_path)
    else:
        config.environment.image = "swedeck-test:latest"
    config.environment.timeout = fields.pop("timeout", 10)
    config.run.output = str(tmp_path / "session.traj.json")
    for key, value in fields.items():
        section, name = key.split("__")
        setattr(getattr(config, section), name, value)
    return config


def run_session(config: SwedeckConfig, task: str | None, driver: Driver, *, interactive: bool = True,
                resume: str | None = None, timeout: float = 60) -> SessionResult:
    session = Session(config, task, interactive=interactive, resume=resume)
    driver.session = session
    outcome: list[SessionResult] = []
    worker = threading.Thread(target=lambda: outcome.append(session.run(driver)), daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        session.quit()
        worker.join(10)
        raise AssertionError(f"session did not end within {timeout} s; last events: {driver.events[-5:]}")
    return outcome[0]
