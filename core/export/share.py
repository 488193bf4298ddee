"""The one core function behind `swedeck export` and the replay's export key: a trajectory
file in, the bytes of its ATIF or HTML form out, with what that form cannot hold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Literal

from ..errors import UsageError
from ..trajectory.loader import load_trajectory
from ..trajectory.model import Trajectory
from ..whole_file import write_whole
from .atif import ATIF_VERSION, atif_chunks, step_range

ExportFormat = Literal["atif", "html"]


@dataclass
class Exported:
    source: Path
    chunks: Iterable[bytes]
    """The output, made as it is written (`write_export`): a huge run's is never whole in memory."""
    version: str
    """`ATIF-v1.7`, or the page's own version (`swedeck-html/1`)."""
    steps: int
    """Steps of the run in the output."""
    losses: list[str] = field(default_factory=list)
    """What the format cannot hold: complete once the chunks are all made."""
    size: int = 0
    """Bytes written (`write_export`)."""

    @cached_property
    def data(self) -> bytes:
        """The whole output in memory (a page, a test): the chunks made at once."""
        return b"".join(self.chunks)


def default_kind(out: Path) -> ExportFormat:
    """The format OUT's name asks for: `.html` a page, anything else ATIF."""
    return "html" if out.suffix.lower() in (".html", ".htm") else "atif"


def export(path: str | Path, kind: str, steps: str | None = None,
           prices: Mapping[str, Mapping[str, float]] | None = None, trajectory: Trajectory | None = None) -> Exported:
    """`path` as ATIF or an HTML page (its steps `A:B`); the page's dollars priced with
    `prices` (`model.prices`) over litellm's map. `trajectory`: `path` already read whole (the
    replay's open run), not read again."""
    if trajectory is None:
        trajectory = load_trajectory(path, lazy=True)  # each message built as it is written (and a damaged one said then)
    if not trajectory.steps and not len(trajectory.messages):
        raise UsageError(f"{path}: nothing to export (no messages)")
    if not trajectory.steps:  # messages and no model response (a sample of tool results alone): all of them
        if steps:
            raise UsageError(f"--step {steps}: {path} has no steps (no model response), only messages")
        first, last = 1, 0
    else:
        try:
            first, last = step_range(steps, len(trajectory.steps))
        except ValueError as error:
            raise UsageError(str(error)) from None
    if kind == "atif":
        losses: list[str] = []
        return Exported(trajectory.path, atif_chunks(trajectory, (first, last), losses), ATIF_VERSION,
                        max(0, last - first + 1), losses)
    if kind == "html":
        from .html import PAGE_VERSION, html_chunks

        losses = []
        from ..cost import Prices

        return Exported(trajectory.path, html_chunks(trajectory, (first, last), losses, Prices(prices)), PAGE_VERSION,
                        max(0, last - first + 1), losses)
    raise UsageError(f"--format {kind}: give atif or html")


def write_export(out: Path, exported: Exported) -> None:
    """The whole file or nothing (a temporary file renamed into place), its chunks written as
    they are made; never over the source. `exported.size` says how many bytes."""
    source = exported.source
    try:
        if out.resolve() == source.resolve():
            raise UsageError(f"-o {out}: that is the file being exported (a run's record is never overwritten)")
    except OSError:
        pass
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"-o {out}: no folder {folder}")
    exported.size = write_whole(out, exported.chunks if "data" not in exported.__dict__ else [exported.data],
                                shared=True)  # made to be shared: readable by others, as any new file
