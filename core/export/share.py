"""The one core function behind `swedeck export` and the replay's export key: a trajectory
file in, the bytes of its ATIF or HTML form out, with what that form cannot hold."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..errors import UsageError
from ..trajectory.loader import load_trajectory
from ..whole_file import write_whole
from .atif import ATIF_VERSION, step_range, to_atif

ExportFormat = Literal["atif", "html"]


@dataclass
class Exported:
    source: Path
    data: bytes
    version: str
    """`ATIF-v1.7`, or the page's own version (`swedeck-html/1`)."""
    steps: int
    """Steps of the run in the output."""
    losses: list[str] = field(default_factory=list)


def json_bytes(document: object) -> bytes:
    """The document as UTF-8 JSON; where a text holds a lone surrogate (another tool's file may),
    every non-ASCII character is written as its JSON escape, which keeps it exactly."""
    text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(document, ensure_ascii=True, indent=1) + "\n").encode("ascii")


def default_kind(out: Path) -> ExportFormat:
    """The format OUT's name asks for: `.html` a page, anything else ATIF."""
    return "html" if out.suffix.lower() in (".html", ".htm") else "atif"


def export(path: str | Path, kind: str, steps: str | None = None) -> Exported:
    trajectory = load_trajectory(path)
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
        result = to_atif(trajectory, (first, last))
        data = json_bytes(result.document)
        return Exported(trajectory.path, data, ATIF_VERSION, max(0, last - first + 1), result.losses)
    if kind == "html":
        from .html import PAGE_VERSION, to_html

        page = to_html(trajectory, (first, last))
        return Exported(trajectory.path, page.data, PAGE_VERSION, max(0, last - first + 1), page.losses)
    raise UsageError(f"--format {kind}: give atif or html")


def write_export(out: Path, data: bytes, source: Path) -> None:
    """The whole file or nothing (a temporary file renamed into place); never over the source."""
    try:
        if out.resolve() == source.resolve():
            raise UsageError(f"-o {out}: that is the file being exported (a run's record is never overwritten)")
    except OSError:
        pass
    folder = out.parent if str(out.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"-o {out}: no folder {folder}")
    write_whole(out, data)
