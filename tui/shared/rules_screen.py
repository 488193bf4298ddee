"""`R` in replay and watch (SPEC §20): `swedeck rules dry-run`'s table for the runs in view,
with the rules of `agent.rules` (docs/rules.md). The dry run is the core's (`rules.dry_run`),
in a worker; the table is the same lines the command prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker

from ..kit.view_screen import ViewModal, background, css_beside
from ..widgets.text import literal

NO_RULES = ("No approval rules to try: set agent.rules in the config (a Claude Code settings file, a Codex "
            ".rules, a Gemini CLI policy, an opencode.json), or run swedeck rules dry-run RULES PATH.")


class RulesScreen(ViewModal[None]):
    CSS_PATH = css_beside(__file__)
    BINDINGS = [Binding("escape,q,R", "dismiss", "Close")]

    class Done(Message):
        def __init__(self, lines: list[str]) -> None:
            super().__init__()
            self.lines = lines

    def __init__(self, rules: list[str], paths: list[Path]) -> None:
        super().__init__()
        self.rules = rules
        self.paths = paths

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="rules-box") as box:
            box.border_title = "approval rules over these runs"
            yield Static(literal("reading the runs…" if self.rules else NO_RULES), id="rules-text", markup=False)

    def on_mount(self) -> None:
        if self.rules:
            self.dry_run()

    @background(exclusive=True, group="rules")
    def dry_run(self) -> None:
        from swedeck.core.errors import SwedeckError
        from swedeck.core.rules.dry_run import dry_run, table
        from swedeck.core.rules.load import load_rules

        try:
            lines = table(dry_run(load_rules(self.rules), self.paths))
        except SwedeckError as error:
            lines = [str(error)]
        self.post_message(self.Done(lines))

    def on_rules_screen_done(self, message: Done) -> None:
        self.query_one("#rules-text", Static).update(literal("\n".join(message.lines)))

    def worker_failed(self, worker: Worker[Any]) -> bool:
        """The dry run raised (a rule file swedeck misread, a run it could not): said in the box."""
        error = worker.error
        self.query_one("#rules-text", Static).update(literal(f"the dry run failed: {type(error).__name__}: {error}"))
        return True
