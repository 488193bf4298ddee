"""What the watch view shows, as Textual vars: the state, without a widget (the other views'
pattern), tested without an app (tests/test_view_states.py). The header binds to `header`,
computed from the vars below; the table is drawn from `rows` by the screen, cell by cell."""

from __future__ import annotations

import msgspec
from textual.dom import DOMNode
from textual.reactive import var

from swedeck.core.batch.progress import VERDICT_WORDS
from swedeck.core.batch.verify import CLASSES
from swedeck.core.watch import WatchRow


class BatchLine(msgspec.Struct, frozen=True):
    """What the header says of the batch whose folder this is."""

    instances: int
    ended: bool
    executor: str
    workers: int


class WatchState(DOMNode):
    """The watch screen's base class (Textual binds a widget only to the node that composes it)."""

    root: var[str] = var("")
    rows: var[dict[str, WatchRow]] = var(dict)
    """Every row of the folder, by key, as the last scan left them (replaced, never changed in place)."""
    filter: var[str | None] = var(None)
    """The class whose rows are shown (`v`); None: every row."""
    notices: var[bool] = var(False)
    """The folder is followed by the file system's change notices (else by polling)."""
    scans: var[int] = var(0)
    """Scans applied so far."""
    batch_line: var[BatchLine | None] = var(None)
    header: var[str] = var("")

    def compute_header(self) -> str:
        rows = self.rows.values()
        counts: dict[str, int] = {}
        verdicts: dict[str, int] = {}
        for row in rows:
            counts[row.status] = counts.get(row.status, 0) + 1
            if row.verdict:
                verdicts[row.verdict] = verdicts.get(row.verdict, 0) + 1
        summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        if verdicts:
            summary += " · " + ", ".join(f"{VERDICT_WORDS.get(k, k)} {verdicts[k]}" for k in CLASSES if k in verdicts)
        if self.filter is not None:
            summary += f" · showing {VERDICT_WORDS.get(self.filter, self.filter)} (v: next)"
        batch = self.batch_line
        if batch is not None:
            cost = sum(row.cost for row in rows)
            ended = "ended" if batch.ended else f"{batch.executor}, {batch.workers} workers"
            summary = f"batch of {batch.instances} ({ended}) · {summary} · ${cost:.2f}"
        return f"watching {self.root}" + (f" · {summary}" if self.scans else "")

    def shown(self, row: WatchRow) -> bool:
        """The row passes the filter (`v`)."""
        return self.filter is None or row.verdict == self.filter
