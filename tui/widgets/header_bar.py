"""The header: mode badge, task title, model, environment, step, cost, state (SPEC §10.1)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.widgets import Label

from swedeck.core.compaction_notes import model_label
from swedeck.core.text import one_line

from .text import literal


@dataclass(frozen=True)
class HeaderInfo:
    title: str = "(no task yet)"
    model: str = ""
    environment: str = ""
    host: bool = False
    """Commands run on this machine (local environment): the header warns."""
    mode: str = "confirm"
    step: int = 0
    step_limit: int = 0
    cost: float = 0.0
    cost_limit: float = 0.0
    state: str = "starting"

    def but(self, **changes: Any) -> HeaderInfo:
        return replace(self, **changes)


class HeaderBar(Vertical):
    DEFAULT_CSS = """
    HeaderBar { height: 2; background: $panel; color: $foreground; }
    HeaderBar Horizontal { height: 1; }
    HeaderBar #mode-badge { padding: 0 1; text-style: bold; background: $primary; color: $background; }
    HeaderBar #mode-badge.-yolo { background: $error; }
    HeaderBar #mode-badge.-human { background: $secondary; }
    HeaderBar #title { width: 1fr; padding: 0 1; text-style: bold; }
    HeaderBar #state { padding: 0 1; color: $accent; text-style: bold; }
    HeaderBar #model, HeaderBar #environment, HeaderBar #step, HeaderBar #cost { padding: 0 1; color: $text-muted; }
    HeaderBar #environment.-host { color: $warning; }
    HeaderBar #model { width: auto; max-width: 40%; }
    HeaderBar #environment { width: 1fr; }
    """

    info: reactive[HeaderInfo] = reactive(HeaderInfo, always_update=True)

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield Label(id="mode-badge")
            yield Label(id="title")
            yield Label(id="state")
        with Horizontal():  # step and cost first: at 80 columns the environment's path is what is cut
            yield Label(id="step")
            yield Label(id="cost")
            yield Label(id="model")
            yield Label(id="environment")

    def watch_info(self, info: HeaderInfo) -> None:
        if not self.is_mounted:
            return
        badge = self.query_one("#mode-badge", Label)
        badge.update(info.mode.upper())
        badge.set_classes(f"-{info.mode}")
        self.query_one("#title", Label).update(literal(one_line(info.title, 200)))
        self.query_one("#state", Label).update(literal(info.state))
        self.query_one("#model", Label).update(literal(model_label(info.model) or "(no model)"))
        environment = self.query_one("#environment", Label)
        environment.update(literal(self._environment_text(info)))
        environment.set_class(info.host, "-host")
        limit = f"/{info.step_limit}" if info.step_limit else ""
        self.query_one("#step", Label).update(f"step {info.step}{limit}")
        cost_limit = f"/${info.cost_limit:.2f}" if info.cost_limit else ""
        self.query_one("#cost", Label).update(f"${info.cost:.2f}{cost_limit}")

    def _environment_text(self, info: HeaderInfo) -> str:
        """The environment, whole where it fits; else its kind and the end of its folder (what
        tells two sessions apart), so that at 80 columns the line is never cut mid-word."""
        text = f"⚠ host: {info.environment}" if info.host else info.environment
        room = self.size.width - sum(label.region.width for label in self.query("#step, #cost, #model")
                                     if isinstance(label, Label)) - 2
        if room <= 0 or len(text) <= room:
            return text
        kind = info.environment.split(" ", 1)[0]
        head = f"⚠ {kind} " if info.host else f"{kind} "
        tail = info.environment.rsplit(" ", 1)[-1] if " " in info.environment else ""
        keep = max(0, room - len(head) - 1)
        return head + ("…" + tail[-keep:] if keep and tail else "")[: room - len(head)]

    def on_resize(self) -> None:
        self.call_after_refresh(self.watch_info, self.info)  # the room the labels left, once laid out

    def on_mount(self) -> None:
        self.watch_info(self.info)
