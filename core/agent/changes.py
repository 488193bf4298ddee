"""What the loop's collaborators decide for the agent, as values (SPEC §6).

`endings` and `compaction` read the agent through their seams (`seams.py`) and never write
its fields: each returns a `Change`, and the agent applies it (`Agent.apply`), the one owner
of its state. A change says only what it changes; `NO_CHANGE` changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Change:
    compacted: bool = False
    """A compaction (or its undo) was recorded."""
    quiet_until: int | None = None
    """No automatic compaction before this step (one failed, was declined or undone; or 0: act again)."""
    fit_applied: bool | None = None
    """A processor change (or a compaction) was made to fit the window: a second refusal ends the run."""
    processors: list[Any] | None = None
    """Switch the history processors to these."""
    task: str | None = None
    """A follow-up task: the next turn starts with it."""
    progress: bool = False
    """The limits changed: say the progress again."""

    def then(self, later: Change) -> Change:
        """This change, then `later`: what `later` sets wins."""
        def pick(mine: Any, theirs: Any) -> Any:
            return mine if theirs is None else theirs
        return Change(compacted=self.compacted or later.compacted, quiet_until=pick(self.quiet_until, later.quiet_until),
                      fit_applied=pick(self.fit_applied, later.fit_applied), processors=pick(self.processors, later.processors),
                      task=pick(self.task, later.task), progress=self.progress or later.progress)


NO_CHANGE = Change()
