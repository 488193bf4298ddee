"""The record every benchmark returns, and the JSON line it becomes.

A goal is a bound per figure (`{"local_median_ms": {"max": 5}}`). A figure that could not
be measured is `None` and comes with a reason in `notes`; then `meets_goal` is `None` too,
since a goal is met only when every figure it bounds was measured and is within bounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Bound:
    max: float | None = None
    min: float | None = None
    equals: bool | None = None

    def holds(self, value: float | bool) -> bool:
        if self.equals is not None:
            return value is self.equals
        return (self.max is None or value <= self.max) and (self.min is None or value >= self.min)

    def to_json(self) -> dict[str, float | bool]:
        return {key: value for key, value in (("max", self.max), ("min", self.min), ("equals", self.equals))
                if value is not None}


def at_most(value: float) -> Bound:
    return Bound(max=value)


def at_least(value: float) -> Bound:
    return Bound(min=value)


def is_true() -> Bound:
    return Bound(equals=True)


@dataclass
class Result:
    benchmark: str
    name: str
    figures: dict[str, Any]
    goal: dict[str, Bound] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    """Why a figure is missing, or what a reader should know to read it (figure name -> text)."""

    @property
    def meets_goal(self) -> bool | None:
        values = [self.figures.get(name) for name in self.goal]
        if not self.goal or any(value is None for value in values):
            return None
        return all(bound.holds(value) for bound, value in zip(self.goal.values(), values, strict=True))

    def to_json(self, machine: dict[str, Any], versions: dict[str, Any]) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "name": self.name,
            "figures": self.figures,
            "goal": {name: bound.to_json() for name, bound in self.goal.items()},
            "meets_goal": self.meets_goal,
            "notes": self.notes,
            "machine": machine,
            "versions": versions,
        }
