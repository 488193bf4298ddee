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

    def get_default_screen(self) -> Screen[Any]:
        """The app's first screen (as in ReplayApp): the diff, or two batches' list."""
        return self.diff_screen


def _pair_screen(a: str, b: str, processors: list[dict[str, Any]] | None, fork_model: str | None) -> DiffScreen:
    """The diff view of runs `a` and `b` (any formats, `PATH#N` too), read and aligned by the core."""
    from pathlib import Path

    from swedeck.core.diff.align import align
    from swedeck.core.replay.document import LoadedDocument
    from swedeck.core.trajectory.loader import load_trajectory

    runs = [load_trajectory(a, lazy=True), load_trajectory(b, lazy=True)]  # messages built as the alignment reads them
    sides = [Side(Path(path).name, path, run, LoadedDocument(run)) for path, run in zip((a, b), runs, strict=True)]
    return DiffScreen(sides[0], sides[1], align(runs[0], runs[1]), processors=processors, fork_model=fork_model)
