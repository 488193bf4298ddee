"""What a batch tells the person (SPEC §15): events, a progress line, or JSON lines.

On a terminal one status line is redrawn in place (done / running / failed, cost, ETA) and
each finished instance prints a line above it; elsewhere (a log, CI) the status line is
printed every `EVERY_S` seconds instead. `--json` prints one object per event.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, TextIO

from ..text import inert_json, strip_control
from .instance_run import InstanceResult

EVERY_S = 30.0


@dataclass(frozen=True)
class BatchStarted:
    total: int
    skipped: int
    workers: int
    executor: str
    output: str


@dataclass(frozen=True)
class InstanceStarted:
    instance_id: str


@dataclass(frozen=True)
class InstanceFinished:
    result: InstanceResult


@dataclass(frozen=True)
class BatchNotice:
    text: str


@dataclass(frozen=True)
class BatchEnded:
    exit_statuses: dict[str, int]
    done: int
    failed: int
    not_run: int
    cost: float
    duration_s: float
    exit_code: int
    warned: list[str] = field(default_factory=list)
    """The instances whose result carries a warning (a patch with a secret of the person's masked)."""
    verdicts: dict[str, int] = field(default_factory=dict)
    """Every selected instance by class, earlier runs' included (what `report.json` counts)."""
    class_cost: dict[str, float] = field(default_factory=dict)
    """Each class's dollars (`report.json`'s `swedeck.cost_usd.by_class`)."""


VERDICT_WORDS = {"resolved": "resolved", "unresolved": "unresolved", "empty_patch": "empty patch",
                 "agent_error": "agent error", "infra_failure": "infra", "not_run": "not run",
                 "not_verified": "not verified"}
"""Each class as the progress line says it."""

BatchEvent = BatchStarted | InstanceStarted | InstanceFinished | BatchNotice | BatchEnded


@dataclass
class Tally:
    """The counts the status line shows, kept by the batch as instances start and end."""

    to_run: int = 0
    workers: int = 1
    running: set[str] = field(default_factory=set)
    done: int = 0
    failed: int = 0
    cost: float = 0.0
    """Finished instances' cost plus the running ones' cost so far."""
    durations: list[float] = field(default_factory=list)
    exit_statuses: Counter[str] = field(default_factory=Counter)
    warned: list[str] = field(default_factory=list)
    verdicts: Counter[str] = field(default_factory=Counter)
    """The finished instances by class (`batch.verify.CLASSES`)."""

    def eta_s(self) -> float | None:
        if not self.durations:
            return None
        left = self.to_run - self.done - self.failed
        return sum(self.durations) / len(self.durations) * left / max(1, min(self.workers, left or 1))

    def line(self) -> str:
        finished = self.done + self.failed
        eta = self.eta_s()
        when = "" if eta is None or finished >= self.to_run else f" · ETA {_duration(eta)}"
        graded = "".join(f" · {word} {self.verdicts[key]}" for key, word in VERDICT_WORDS.items()
                         if self.verdicts[key] and key != "not_verified")  # no verifier: nothing to say
        return (f"batch {finished}/{self.to_run} · {self.done} done · {len(self.running)} running · "
                f"{self.failed} failed{graded} · ${self.cost:.2f}{when}")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class ProgressLine:
    """Human-readable progress: the status line, and one line per finished instance."""

    def __init__(self, out: TextIO, tally: Tally, every_s: float = EVERY_S):
        self.out = out
        self.tally = tally
        self.live = bool(getattr(out, "isatty", lambda: False)())
        self.every_s = every_s
        self._last = 0.0
        self._shown = ""

    def __call__(self, event: BatchEvent) -> None:
        text = self.render(event)
        if text is not None:
            self._print(text)
        if not isinstance(event, BatchEnded):  # the summary is the last word
            self.tick(force=isinstance(event, InstanceStarted | InstanceFinished))

    def render(self, event: BatchEvent) -> str | None:
        match event:
            case BatchStarted():
                skipped = f", {event.skipped} already finished (skipped; --redo runs them again)" if event.skipped else ""
                return (f"swedeck batch: {event.total} instances{skipped}; {event.executor} executor, "
                        f"{event.workers} worker{'' if event.workers == 1 else 's'}; output {event.output}")
            case InstanceFinished():
                result = event.result
                what = f"{result.exit_status}"
                if result.failed and result.message:
                    what += f" ({strip_control(result.message).splitlines()[0][:200]})"
                if result.verified or result.verdict != "not_verified":
                    what += f" → {VERDICT_WORDS.get(result.verdict, result.verdict)}"
                    if result.verification is not None and result.verification.problem:
                        what += f" ({strip_control(result.verification.problem)})"
                steps = f"{result.steps} step" + ("" if result.steps == 1 else "s")
                warnings = "".join(f"\n    warning: {strip_control(warning)}" for warning in result.warnings)
                return (f"  {result.instance_id}: {what} · {steps} · ${result.cost:.2f} · "
                        f"{_duration(result.duration_s)}{warnings}")
            case BatchNotice():
                return f"  {strip_control(event.text)}"
            case BatchEnded():
                counts = ", ".join(f"{status} {count}" for status, count in sorted(event.exit_statuses.items()))
                left = f", {event.not_run} not run" if event.not_run else ""
                warned = (f"\n  warning: {len(event.warned)} patch(es) hold a secret value of yours, masked as *** "
                          f"(they may not apply): {', '.join(event.warned)}") if event.warned else ""
                classes = ", ".join(f"{VERDICT_WORDS.get(key, key)} {count}"
                                    + (f" (${event.class_cost[key]:.2f})" if event.class_cost.get(key) else "")
                                    for key, count in event.verdicts.items() if count)
                graded = any(count for key, count in event.verdicts.items() if key != "not_verified")
                return (f"swedeck batch: {event.done} done, {event.failed} failed{left} · ${event.cost:.2f} · "
                        f"{_duration(event.duration_s)}" + (f"\n  exit statuses: {counts}" if counts else "")
                        + (f"\n  verdicts: {classes} (report.json)" if graded else "") + warned)
        return None

    def tick(self, force: bool = False) -> None:
        """Redraw the status line (on a terminal), or print it now and then (elsewhere)."""
        now = time.monotonic()
        line = self.tally.line()
        if self.live:
            if line != self._shown or force:
                self.out.write("\r\x1b[K" + line)
                self.out.flush()
                self._shown = line
        elif not self._last:
            self._last = now  # the clock starts with the batch
        elif now - self._last >= self.every_s:
            self._last = now
            print(line, file=self.out, flush=True)

    def _print(self, text: str) -> None:
        if self.live and self._shown:
            self.out.write("\r\x1b[K")
            self._shown = ""
        print(text, file=self.out, flush=True)


class JsonLines:
    """`--json`: one object per event, `{"event": "InstanceFinished", ...}`; a `BatchProgress`
    object with the status line's figures as instances start and end."""

    def __init__(self, out: TextIO, tally: Tally):
        self.out = out
        self.tally = tally

    def __call__(self, event: BatchEvent) -> None:
        record: dict[str, Any] = {"event": type(event).__name__, **asdict(event)}
        if isinstance(event, InstanceFinished):
            result = record.pop("result")
            result.pop("final_trajectory", None)
            record.update(result, failed=event.result.failed, verdict=event.result.verdict)
        self._write(record)
        if isinstance(event, InstanceStarted | InstanceFinished):
            tally = self.tally
            self._write({"event": "BatchProgress", "to_run": tally.to_run, "done": tally.done,
                         "running": len(tally.running), "failed": tally.failed, "cost": round(tally.cost, 6),
                         "eta_s": tally.eta_s(), "verdicts": dict(tally.verdicts)})

    def tick(self, force: bool = False) -> None:
        pass

    def _write(self, record: dict[str, Any]) -> None:
        print(inert_json(record), file=self.out, flush=True)
