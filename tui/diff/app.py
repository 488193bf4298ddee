"""The app of `swedeck diff A B` (SPEC §16). Its result is a `ForkRequest` when the person
pressed `f` (A) or `F` (B), else None."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.screen import Screen

from swedeck.core.diff.batch import BatchComparison, InstancePair, ManyBatches
from swedeck.core.trajectory.model import Trajectory
from swedeck.core.ui_settings import UIConfig

from ..kit.app_base import ViewApp
from ..shared.fork import ForkRequest
from .batch_screen import BatchDiffScreen
from .diff_screen import DiffScreen, Side
from .many_batches_screen import ManyBatchesScreen
from .many_screen import ManyRunsScreen


class DiffApp(ViewApp[ForkRequest | None]):
    TITLE = "swedeck diff"
    CSS_PATH: ClassVar = [DiffScreen.CSS_PATH, BatchDiffScreen.CSS_PATH, ManyRunsScreen.CSS_PATH,
                         ManyBatchesScreen.CSS_PATH]
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
    def of_many_batches(cls, many: ManyBatches, *, processors: list[dict[str, Any]] | None = None,
                        fork_model: str | None = None, ui: UIConfig | None = None, theme: str | None = None) -> DiffApp:
        """Three or more batches' instances (issue 66); Enter opens an instance's runs: two in
        the two-run view, more in the N-run view."""
        def runs_screen(paths: list[str]) -> Screen[Any]:
            if len(paths) == 2:
                return _pair_screen(paths[0], paths[1], processors, fork_model)
            return _many_screen(paths, processors, fork_model)
        return cls(ManyBatchesScreen(many, runs_screen), ui=ui, theme=theme)

    @classmethod
    def of(cls, a: str, b: str, *, processors: list[dict[str, Any]] | None = None, fork_model: str | None = None,
           ui: UIConfig | None = None, theme: str | None = None) -> DiffApp:
        """The view of runs `a` and `b` (any formats, `PATH#N` too), read and aligned by the core."""
        return cls(_pair_screen(a, b, processors, fork_model), ui=ui, theme=theme)

    @classmethod
    def of_many(cls, paths: list[str], *, processors: list[dict[str, Any]] | None = None, fork_model: str | None = None,
                ui: UIConfig | None = None, theme: str | None = None) -> DiffApp:
        """Three or more runs (issue 66): all of them in columns against the first, the
        reference (`ManyRunsScreen`); Enter opens the reference and the chosen run in the
        two-run view, where `]` and `[` switch to the next run."""
        app = cls(_many_screen(paths, processors, fork_model), ui=ui, theme=theme)
        return app

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "other_run":
            return self._many() is not None
        return super().check_action(action, parameters)

    def _many(self) -> ManyRunsScreen | None:
        """The N-run view the screens above it were opened from, if any."""
        return next((screen for screen in reversed(self.screen_stack) if isinstance(screen, ManyRunsScreen)), None)

    def action_other_run(self, step: int) -> None:
        """In a pair opened from the N-run view: the reference against the next (or previous) run."""
        many = self._many()
        if many is None or self.screen is many:
            return
        many.action_other_run(step)
        self.switch_screen(many.pair_screen(many.chosen))

    def get_default_screen(self) -> Screen[Any]:
        """The app's first screen (as in ReplayApp): the diff, or two batches' list."""
        return self.diff_screen


def _many_screen(paths: list[str], processors: list[dict[str, Any]] | None, fork_model: str | None) -> ManyRunsScreen:
    """The N-run view of `paths` (any formats), read, aligned and every pair's first divergence
    classed by the core (`diff.nway.compare`); each pair it opens reuses the runs read."""
    from swedeck.core.diff.nway import compare
    from swedeck.core.trajectory.loader import load_trajectory

    runs = [load_trajectory(path, lazy=True) for path in paths]  # messages built as the alignment reads them

    def pair_screen(run: int) -> DiffScreen:
        return _pair_screen(paths[0], paths[run], processors, fork_model, (run, len(paths) - 1), (runs[0], runs[run]))
    return ManyRunsScreen(paths, compare(runs), pair_screen)


def _pair_screen(a: str, b: str, processors: list[dict[str, Any]] | None, fork_model: str | None,
                 of: tuple[int, int] | None = None, read: tuple[Trajectory, Trajectory] | None = None) -> DiffScreen:
    """The diff view of runs `a` and `b` (any formats, `PATH#N` too), read (or `read` already),
    aligned and their first divergence classed by the core (`diff.nway`); `of`: B is other run
    k of n."""
    from pathlib import Path

    from swedeck.core.diff.align import align
    from swedeck.core.diff.nway import divergence
    from swedeck.core.trajectory.loader import load_trajectory

    runs = list(read) if read is not None else [load_trajectory(a, lazy=True), load_trajectory(b, lazy=True)]
    sides = [Side(Path(path).name, path, run) for path, run in zip((a, b), runs, strict=True)]
    alignment = align(runs[0], runs[1])
    found = divergence((0, 1), runs[0], runs[1], alignment)
    why = "the runs never part" if found.step is None else f"they part at step {found.step} of A: {found.cls}"
    if of is not None:
        why = f"run {of[0]} of {of[1]} against the reference (] and [ switch, q back to all runs): {why}"
    return DiffScreen(sides[0], sides[1], alignment, processors=processors, fork_model=fork_model, why=why)
