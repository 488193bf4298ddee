"""The step, cost and wall-time limits (SPEC §6.4): when one is reached, and how "continue"
lifts them at a pause."""

from __future__ import annotations

from ..config import AgentConfig
from ..events import PauseDecision
from .exits import LimitReached


def check(agent: AgentConfig, step: int, cost: float, elapsed_s: float) -> None:
    """Raise `LimitReached`, saying which and by how much, when a limit is reached (0: none)."""
    if agent.step_limit and step >= agent.step_limit:
        raise LimitReached(f"step limit reached ({step}/{agent.step_limit} steps)")
    if agent.cost_limit and cost >= agent.cost_limit:
        raise LimitReached(f"cost limit reached (${cost:.2f}/${agent.cost_limit:.2f})")
    if agent.wall_time_limit_s and elapsed_s >= agent.wall_time_limit_s:
        raise LimitReached(f"wall time limit reached ({elapsed_s:.0f}/{agent.wall_time_limit_s:.0f} s)")


def lift(agent: AgentConfig, decision: PauseDecision) -> None:
    """Apply a `raise_limits` decision: the numbers given, or, without numbers ("continue"),
    every limit that is set lifted by half again."""
    if decision.step_limit is not None:
        agent.step_limit = decision.step_limit
    if decision.cost_limit is not None:
        agent.cost_limit = decision.cost_limit
    if decision.step_limit is None and decision.cost_limit is None:
        agent.step_limit = agent.step_limit and agent.step_limit + max(1, agent.step_limit // 2)
        agent.cost_limit = agent.cost_limit and agent.cost_limit * 1.5
        agent.wall_time_limit_s = agent.wall_time_limit_s and agent.wall_time_limit_s * 1.5
