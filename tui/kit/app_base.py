"""The one app base of swedeck's views (live, replay, diff, watch): each app is a title and
a default screen (a `ViewScreen`); this class owns the rest.

- the person's `ui` settings: themes (shipped and the person's own), the theme shown, and
  `ui.keymap` (binding id -> keys), applied once for every view (`ui_config.py`);
- the start-up notes (a theme file that does not load), told once the app runs;
- the app's keys: Ctrl+Q (the view's `request_quit`) and F1 / ? (the help);
- F1: the keys of the view in front, after the person's keymap, and the app's;
- the command palette: the same keys as commands, run on the view they belong to;
- the first frame (`FirstFrame`), which ends what the command line held off until it;
- `pacing` (`pacing.py`): each key, click and scroll marked from its arrival to the frame after it is
  handled, so that workers step aside; the collector's holds and freezes; the transcript's long-lived children.

Worker errors are the view's (`ViewScreen.on_worker_state_changed`): Textual posts a
worker's state to the node that started it, and does not bubble it to the app.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from textual import events
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from swedeck.core.ui_settings import UIConfig

from ..strip_cycles import without_self_references
from .first_frame import FirstFrame
from .pacing import Pacing
from .ui_config import apply_ui_config, tell_ui_notes
from .view_screen import ViewScreen

ResultT = TypeVar("ResultT")

APP_BINDINGS: list[Binding] = [
    Binding("ctrl+q", "request_quit", "Quit", id="quit", priority=True, show=False,
            tooltip="Quit (the live view asks while a command runs)"),
    Binding("question_mark,f1", "help", "Help", id="help", show=False,
            tooltip="This help"),
]


ARRIVALS = (events.Key, events.MouseUp, events.MouseScrollDown, events.MouseScrollUp)
"""What a person does that workers step aside for (`pacing.quiet`), as the terminal sends it to the
app: a key, a button's release (of which the app makes a `Click`), the wheel."""
HANDLED = (events.Key, events.Click, events.MouseScrollDown, events.MouseScrollUp)
"""The same once a widget handled it and it bubbled back up to the app (a scroll a widget
took, or a release that was no click, stops short: its quiet ends after `UNHANDLED_S`)."""


class ViewApp(FirstFrame, App[ResultT], Generic[ResultT]):
    BINDINGS: ClassVar[list[BindingType]] = [*APP_BINDINGS]

    def __init__(self, *, ui: UIConfig | None = None, theme: str | None = None,
                 themes_dir: Path | None = None) -> None:
        super().__init__()
        without_self_references()  # Textual's lines freed without a collection, from this app's start on
        self.ui = ui or UIConfig()
        self._startup_notes = apply_ui_config(self, self.ui, theme=theme, themes_dir=themes_dir)
        self.pacing = Pacing()

    async def on_event(self, event: events.Event) -> None:
        # looked at before Textual handles it: handing an arrival on marks it forwarded
        returned = isinstance(event, HANDLED) and event.is_forwarded  # bubbled back up (a key's bindings run now)
        if isinstance(event, ARRIVALS) and not event.is_forwarded:  # Textual hands it on (a key to the focused widget)
            self.pacing.quiet.arrived()
        await super().on_event(event)
        if returned:
            self.pacing.quiet.handled(self)

    def on_mount(self) -> None:
        tell_ui_notes(self, self._startup_notes)

    @property
    def view(self) -> ViewScreen | None:
        """The view in front: the top screen that is a view (a modal over it is not)."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, ViewScreen):
                return screen
        return None

    def key_table(self, view: ViewScreen | None = None) -> list[Binding]:
        """The keys of `view` (else the view in front), then the app's that it does not repeat."""
        view = view if view is not None else self.view
        keys = view.key_table() if view is not None else []
        seen = {binding.id for binding in keys} | {_plain(binding.action) for binding in keys}
        return [*keys, *(binding for binding in APP_BINDINGS
                         if binding.id not in seen and binding.action not in seen)]

    def action_help(self) -> None:
        from ..shared.help_screen import HelpScreen  # on its key, not before the first frame

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.key_table(), self.ui.keymap))

    def action_request_quit(self) -> None:
        base = self.screen_stack[0] if self.screen_stack else None
        if isinstance(base, ViewScreen):
            base.request_quit()
        else:
            self.exit()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        yield from self._key_commands()

    def _key_commands(self) -> Iterator[SystemCommand]:
        """The palette's commands: every key of the view in front (run on it), then the app's."""
        view = self.view
        seen: set[str] = set()
        for binding in self.key_table(view):
            if binding.action in seen:
                continue
            seen.add(binding.action)
            target = self if binding in APP_BINDINGS or view is None else view
            help_text = f"{binding.tooltip} [{binding.id}]" if binding.id else binding.tooltip
            yield SystemCommand(binding.description or binding.action, help_text,
                                partial(self.run_action, binding.action, target))


def _plain(action: str) -> str:
    """`app.help` -> `help`: the action a binding names, without its namespace."""
    return action.removeprefix("app.")
