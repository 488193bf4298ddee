"""The app of `swedeck diff A B` (SPEC §16). Its result is a `ForkRequest` when the person
pressed `f` (A) or `F` (B), else None."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.screen import Screen

from swedeck.core.diff.batch import BatchComparison, InstancePair
from swedeck.core.ui_settings import UIConfig

from ..kit.app_base import ViewApp
from ..shared.fork import ForkRequest
from .batch_screen import BatchDiffScreen
from .diff_screen import DiffScreen, Side


class DiffApp(ViewApp[ForkRequest | None]):
    TITLE = "swedeck diff"
    CSS_PATH: ClassVar = [DiffScreen.CSS_PATH, BatchDiffScreen.CSS_PATH]
    """A default screen's own CSS file is not read: the app reads both (either can be the first)."""

    def __init__(self, screen: Screen[Any], *, ui: UIConfig | None = None, theme: str | None = None,
                 **_: Any) -> None:
        super().__init__(ui=ui, theme=theme)
        self.diff_screen = screen

    @classmethod
    def of_batches(cls, comparison: BatchComparison, *, processors: list[dict[str, Any]] | None = None, fork_model: str | None = None,
                   ui: UIConfig | None = None, theme: str | None = None) -> DiffApp:
        """The instances of two batches; Enter opens a pair's diff over the list."""
        app: DiffApp

        def open_pair(pair: InstancePair) -> None:
            # the list opens only pairs with a trajectory on both sides (BatchDiffScreen.action_open_pair)
            assert pair.a.trajectory is not None and pair.b.trajectory is not None
            app.push_screen(_pair_screen(pair.a.trajectory, pair.b.trajectory, processors, fork_model))
        app = cls(BatchDiffScreen(comparison, open_pair), ui=ui, theme=theme)
        return app

    @classmethod
    def of(cls, a: str, b: str, *, processors: list[dict[str, Any]] | None = None, fork_model: str | None = None,
           ui: UIConfig | None = None, theme: str | None = None) -> DiffApp:
        """The view of runs `a` and `b` (any formats, `PATH#N` too), read and aligned by the core."""
        return cls(_pair_screen(a, b, processors, fork_model), ui=ui, theme=theme)

    @classmethod
    def of_many(cls, paths: list[str], *, processors: list[dict[str, Any]] | None = None, fork_model: str | None = None,
                ui: UIConfig | None = None, theme: str | None = None) -> DiffApp:
        """Three or more runs (issue 66): the first, the reference, against one other run at a
        time, `]` and `[` switching which; each pair's first divergence classed below its totals."""
        app = cls(_pair_screen(paths[0], paths[1], processors, fork_model, (1, len(paths) - 1)), ui=ui, theme=theme)
        app.runs, app.chosen, app.options = list(paths), 1, (processors, fork_model)
        return app

    runs: list[str] = []
    chosen = 1
    options: tuple[list[dict[str, Any]] | None, str | None] = (None, None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "other_run":
            return len(self.runs) > 2
        return super().check_action(action, parameters)

    def action_other_run(self, step: int) -> None:
        """The reference against the next (or previous) other run."""
        if len(self.runs) <= 2:
            return
        self.chosen = (self.chosen - 1 + step) % (len(self.runs) - 1) + 1
        if self.chosen == 1:  # the first pair is the app's own screen, under any other
            while len(self.screen_stack) > 1:
                self.pop_screen()
            return
        processors, fork_model = self.options
        screen = _pair_screen(self.runs[0], self.runs[self.chosen], processors, fork_model,
                              (self.chosen, len(self.runs) - 1))
        screen.leaves_app = True  # q quits, as on the first pair
        if len(self.screen_stack) > 1:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    def get_default_screen(self) -> Screen[Any]:
        """The app's first screen (as in ReplayApp): the diff, or two batches' list."""
        return self.diff_screen


def _pair_screen(a: str, b: str, processors: list[dict[str, Any]] | None, fork_model: str | None,
                 of: tuple[int, int] | None = None) -> DiffScreen:
    """The diff view of runs `a` and `b` (any formats, `PATH#N` too), read, aligned and their
    first divergence classed by the core (`diff.nway`); `of`: B is other run k of n."""
    from pathlib import Path

    from swedeck.core.diff.align import align
    from swedeck.core.diff.nway import divergence
    from swedeck.core.replay.document import LoadedDocument
    from swedeck.core.trajectory.loader import load_trajectory

    runs = [load_trajectory(a, lazy=True), load_trajectory(b, lazy=True)]  # messages built as the alignment reads them
    sides = [Side(Path(path).name, path, run, LoadedDocument(run)) for path, run in zip((a, b), runs, strict=True)]
    alignment = align(runs[0], runs[1])
    found = divergence((0, 1), runs[0], runs[1], alignment)
    why = "the runs never part" if found.step is None else f"they part at step {found.step} of A: {found.cls}"
    if of is not None:
        why = f"run {of[0]} of {of[1]} against the reference (] and [ switch): {why}"
    return DiffScreen(sides[0], sides[1], alignment, processors=processors, fork_model=fork_model, why=why)
