"""Cost you can account for (issue 65): each step's dollars by kind of token, by role and by
model, reconciled with the agent's own total.

Prices are litellm's model map, as the pinned litellm ships it (read from its file, never by
importing litellm), per token: input, output, cache read, cache write. `model.prices` in the
config sets a model's prices (per million tokens) over the map's. A model with no price is
*unpriced*: named, and never summed as zero.

A step's usage gives its tokens: the prompt (every input token: cached ones and cache writes
among them), the cached ones, the cache writes where recorded, the completion (reasoning
among it). Input = prompt - cached - cache writes, at the input price; cached at the cache
read price (else the input price); cache writes at the cache write price (else the input
price); completion at the output price.

Roles: the main line; each subagent whose run the file has beside it (Claude Code's
`subagents/` files), by its id; and the side calls a record keeps beside the main line
(titles, summaries, warm-ups). The agent's own figure, where its file has one (Claude Code's
`cost-state`), is the total it is reconciled with: `agrees`, or the difference and why.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .messages import Usage, answered_by
from .trajectory.model import Trajectory

KINDS = ("input", "cache_read", "cache_write", "output")
AGREES_WITHIN = 0.005
"""A difference under half a percent of the agent's own total (its rounding) agrees."""


@dataclass(frozen=True)
class Price:
    """USD per token of each kind; `cache_read`/`cache_write` None: the input price."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    source: str = "litellm"

    def dollars(self, usage: Usage) -> dict[str, float]:
        return dict(zip(KINDS, self.split(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens or 0,
                                          usage.cache_write_tokens or 0), strict=True))

    def split(self, prompt: int, completion: int, cached: int, written: int) -> tuple[float, float, float, float]:
        """A call's dollars by kind (`KINDS`), from its usage's figures."""
        return (max(0, prompt - cached - written) * self.input,
                cached * (self.cache_read if self.cache_read is not None else self.input),
                written * (self.cache_write if self.cache_write is not None else self.input),
                completion * self.output)


class Prices:
    """Model -> its `Price`: `model.prices` first (per million tokens), then litellm's map."""

    def __init__(self, overrides: Mapping[str, Mapping[str, float]] | None = None) -> None:
        self.overrides = {name: dict(value) for name, value in (overrides or {}).items()}
        self._found: dict[str, Price | None] = {}

    def of(self, model: str | None) -> Price | None:
        if not model:
            return None
        if model not in self._found:
            self._found[model] = self._look_up(model)
        return self._found[model]

    def of_config(self, model: str) -> Price | None:
        """The model's price as `model.prices` sets it; None where it does not."""
        for name in _names(model):
            given = self.overrides.get(name)
            if given is not None:
                per = 1e-6
                cache_read, cache_write = given.get("cache_read"), given.get("cache_write")
                return Price(float(given.get("input", 0)) * per, float(given.get("output", 0)) * per,
                             None if cache_read is None else float(cache_read) * per,
                             None if cache_write is None else float(cache_write) * per, "config")
        return None

    def _look_up(self, model: str) -> Price | None:
        given = self.of_config(model)
        if given is not None:
            return given
        from .model_map import model_map

        known = model_map() or {}
        for name in _names(model):
            info = known.get(name)
            if isinstance(info, Mapping) and (info.get("input_cost_per_token") or info.get("output_cost_per_token")):
                return Price(float(info.get("input_cost_per_token") or 0), float(info.get("output_cost_per_token") or 0),
                             _number(info.get("cache_read_input_token_cost")),
                             _number(info.get("cache_creation_input_token_cost")))
        return None


def _names(model: str) -> list[str]:
    """The names a model is priced under: as given, without its provider, without a date."""
    names = [model]
    bare = model.split("/", 1)[1] if "/" in model else model
    names.append(bare)
    if bare.rsplit("-", 1)[-1].isdigit() and len(bare.rsplit("-", 1)[-1]) == 8:  # -20241022
        names.append(bare.rsplit("-", 1)[0])
    return list(dict.fromkeys(names))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


@dataclass
class Call:
    """One model call to account for: its role, model, usage and step (main-line calls)."""

    role: str
    model: str | None
    usage: Usage | None
    step: int | None = None


@dataclass
class CostReport:
    total_usd: float = 0.0
    by_kind: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KINDS, 0.0))
    by_role: dict[str, float] = field(default_factory=dict)
    by_model: dict[str, float] = field(default_factory=dict)
    unpriced: dict[str, int] = field(default_factory=dict)
    """Model -> calls with usage but no price (not in the total)."""
    without_usage: int = 0
    steps: dict[int, float] = field(default_factory=dict)
    """Main-line step -> its dollars; none for a step whose model is unpriced or that has no
    usage (`steps.get`: None)."""
    agent_total_usd: float | None = None
    agent_by_model: dict[str, float] = field(default_factory=dict)
    reconciliation: str | None = None
    tokens: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})
    """The calls' tokens, summed (what an agent that counts tokens, not dollars, is reconciled with)."""
    agent_tokens: dict[str, Any] | None = None
    """The agent's own count of them (Codex's token_count total, Inspect's model_usage, a record's usage)."""
    token_reconciliation: str | None = None

    def as_record(self) -> dict[str, Any]:
        return {"total_usd": round(self.total_usd, 8), "by_kind": _rounded(self.by_kind),
                "by_role": _rounded(self.by_role), "by_model": _rounded(self.by_model),
                "unpriced": dict(self.unpriced), "calls_without_usage": self.without_usage,
                "agent_total_usd": self.agent_total_usd, "reconciliation": self.reconciliation,
                "tokens": dict(self.tokens), "agent_tokens": self.agent_tokens,
                "token_reconciliation": self.token_reconciliation}


def _rounded(values: Mapping[str, float]) -> dict[str, float]:
    return {key: round(value, 8) for key, value in values.items()}


def counted(usage: Usage | None) -> bool:
    """Whether a call's usage counts any token (a call without is neither priced nor unpriced)."""
    return usage is not None and bool(usage.prompt_tokens or usage.completion_tokens)


def call_dollars(call: Call, prices: Prices) -> float | None:
    """A call's dollars; None when it has no usage or its model no price (unpriced, never 0)."""
    if call.usage is None or not counted(call.usage):
        return None
    price = prices.of(call.model)
    return None if price is None else sum(price.dollars(call.usage).values())


@dataclass(frozen=True)
class StepCost:
    """A step's dollars (None: no usage, or `unpriced`: its model has no price) and the run's
    dollars up to it (its priced steps')."""

    dollars: float | None
    so_far: float
    unpriced: str | None = None

    def note(self) -> str:
        """The meter's words for it."""
        if self.unpriced:
            return f"unpriced: {self.unpriced}" + (f" · {money(self.so_far)} so far" if self.so_far else "")
        if self.dollars is None:
            return f"{money(self.so_far)} so far" if self.so_far else ""
        return f"{money(self.dollars)} this step · {money(self.so_far)} so far"


class RunningCost:
    """Each step's `StepCost` as a run's steps are read in order (the replay's curve worker)."""

    def __init__(self, prices: Prices, model: str | None) -> None:
        self.prices, self.model, self.so_far = prices, model, 0.0

    def add(self, usage: Usage | None, model: str | None) -> StepCost:
        name = model or self.model
        dollars = call_dollars(Call("main", name, usage), self.prices)
        self.so_far += dollars or 0.0
        priced = dollars is not None or not counted(usage)
        return StepCost(dollars, self.so_far, None if priced else name or "(no model named)")


def money(dollars: float) -> str:
    """Dollars as the views show them: four places under a dollar, two from ten."""
    return f"${dollars:.4f}" if dollars < 1 else f"${dollars:.3f}" if dollars < 10 else f"${dollars:,.2f}"


_NO_USAGE = (-1, 0, 0, 0)


def account(calls: Iterable[Call], prices: Prices) -> CostReport:
    """The calls' dollars, by kind, role and model; unpriced models named, not summed."""
    return account_rows(map(_row, calls), prices)


Row = tuple[str, str | None, int | None, int, int, int, int]
"""A call as `account_rows` reads it: role, model, step, and its usage's figures: prompt,
completion, cached, cache write (0: none); a prompt of -1 for no usage."""


def _row(call: Call) -> Row:
    usage = call.usage
    if usage is None:
        return (call.role, call.model, call.step, *_NO_USAGE)
    return (call.role, call.model, call.step, usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens or 0,
            usage.cache_write_tokens or 0)


def account_rows(rows: Iterable[Row], prices: Prices, without_usage: int = 0) -> CostReport:
    """`account` of calls given as rows (a reader's `StepFacts` gives a million steps' so, no
    call or usage built for each), summed in their order; `without_usage`: calls without
    usage left out of the rows (counted by the facts at C speed: 2.5 million tiny steps)."""
    report = CostReport()
    tokens, steps, unpriced, by_role, by_model = report.tokens, report.steps, report.unpriced, report.by_role, report.by_model
    prompts = completions = 0
    without = without_usage
    total = input_usd = read_usd = write_usd = output_usd = 0.0
    price_of = prices.of
    for role, model, step, prompt, completion, cached, written in rows:
        if prompt >= 0:
            prompts += prompt
            completions += completion
        if prompt < 0 or not (prompt or completion):  # no usage, or none that counts (`counted`)
            without += 1
            continue
        price = price_of(model)
        if price is None:
            name = model or "(no model named)"
            unpriced[name] = unpriced.get(name, 0) + 1
            continue
        plain, read, write, output = price.split(prompt, completion, cached, written)
        cost = plain + read + write + output
        total += cost
        input_usd += plain
        read_usd += read
        write_usd += write
        output_usd += output
        by_role[role] = by_role.get(role, 0.0) + cost
        name = model or "(no model named)"
        by_model[name] = by_model.get(name, 0.0) + cost
        if step is not None:
            steps[step] = cost
    tokens["prompt_tokens"], tokens["completion_tokens"], report.without_usage = prompts, completions, without
    report.total_usd = total
    report.by_kind = dict(zip(KINDS, (input_usd, read_usd, write_usd, output_usd), strict=True))
    return report


def trajectory_calls(trajectory: Trajectory, role: str = "main") -> list[Call]:
    """The model calls of a trajectory's steps, each with the model its answer names (else the
    file's), every step built (`trajectory_rows` reads a reader's facts instead, where it has them)."""
    calls = []
    for step in trajectory.steps:
        model = answered_by(trajectory.messages[step.message_index], trajectory.info.model_name)
        calls.append(Call(role, model, step.usage, step.index if role == "main" else None))
    return calls


def trajectory_rows(trajectory: Trajectory, role: str = "main") -> tuple[Iterable[Row], int]:
    """`trajectory_calls` as `account_rows` reads them, and how many calls without usage were
    left out of them: from a reader's `StepFacts` where it has them (no call, usage or step
    built for each), its steps' with usage alone."""
    facts = trajectory.step_facts()
    if facts is None:
        return map(_row, trajectory_calls(trajectory, role)), 0
    return facts.rows(role, trajectory.info.model_name, numbered=role == "main"), facts.without_usage()


def side_calls(trajectory: Trajectory) -> list[Call]:
    """The calls a record of `swedeck record` kept beside its main line (titles, summaries, warm-ups)."""
    from .trajectory.readers.api_requests import EXCHANGE

    calls = []
    for event in trajectory.meta_events:
        data = event.data
        if event.event != EXCHANGE or data.get("line") in ("main", "subagent") or data.get("status") != 200:
            continue  # a subagent's calls are its run's (`subagents.subagent_runs`)
        usage = data.get("usage") if isinstance(data.get("usage"), Mapping) else {}
        calls.append(Call("side calls", data.get("model"), Usage(
            prompt_tokens=int(usage.get("prompt") or 0), completion_tokens=int(usage.get("output") or 0),
            cached_tokens=int(usage.get("cached") or 0), cache_write_tokens=int(usage.get("cache_creation") or 0) or None)
            if usage else None))
    return calls


def cost_of(trajectory: Trajectory, prices: Prices, subagents: Iterable[tuple[str, Trajectory]] = ()) -> CostReport:
    """A trajectory's cost report: its main line, the subagent runs given (id, trajectory), the
    side calls of a record; reconciled with the agent's own total where the file has one."""
    subagents = list(subagents)  # read twice: their calls, and their own counts
    parts = [trajectory_rows(trajectory), (map(_row, side_calls(trajectory)), 0),
             *(trajectory_rows(run, f"subagent {name}") for name, run in subagents)]
    report = account_rows(itertools.chain.from_iterable(rows for rows, _ in parts), prices,
                          without_usage=sum(left for _, left in parts))
    agent = trajectory.info.raw.get("agent_cost")
    if isinstance(agent, Mapping) and isinstance(agent.get("total_usd"), int | float):
        report.agent_total_usd = float(agent["total_usd"])
        report.agent_by_model = {name: float(usage["costUSD"]) for name, usage in
                                 (agent.get("by_model") or {}).items()
                                 if isinstance(usage, Mapping) and isinstance(usage.get("costUSD"), int | float)}
        report.reconciliation = reconcile(report)
    counted = trajectory.info.raw.get("agent_usage") or _record_usage(trajectory)
    if isinstance(counted, Mapping) and counted.get("covers") == "this thread":  # each sub-agent's thread its own count
        counted = dict(counted)
        for _, run in subagents:
            own = run.info.raw.get("agent_usage")
            if isinstance(own, Mapping):
                counted["prompt_tokens"] += int(own.get("prompt_tokens") or 0)
                counted["completion_tokens"] += int(own.get("completion_tokens") or 0)
    if isinstance(counted, Mapping) and isinstance(counted.get("prompt_tokens"), int):
        report.agent_tokens = {key: value for key, value in counted.items() if key != "covers"}
        report.token_reconciliation = reconcile_tokens(report)
    return report


def _record_usage(trajectory: Trajectory) -> dict[str, Any] | None:
    """A record's own count: the usage of every call it recorded with an answer (main and side)."""
    from .trajectory.readers.api_requests import EXCHANGE

    used: list[Mapping[str, Any]] = [
        event.data["usage"] for event in trajectory.meta_events
        if event.event == EXCHANGE and event.data.get("status") == 200 and isinstance(event.data.get("usage"), Mapping)]
    if not used:
        return None
    return {"source": "the record's provider usage", "prompt_tokens": sum(int(usage.get("prompt") or 0) for usage in used),
            "completion_tokens": sum(int(usage.get("output") or 0) for usage in used)}


def reconcile_tokens(report: CostReport) -> str:
    """`agrees`, or the difference in tokens and what it means (calls the agent counted that
    swedeck did not see, or the other way)."""
    theirs = report.agent_tokens or {}
    prompt = report.tokens["prompt_tokens"] - int(theirs.get("prompt_tokens") or 0)
    completion = report.tokens["completion_tokens"] - int(theirs.get("completion_tokens") or 0)
    if not prompt and not completion:
        return "agrees"
    said = f"differs by {prompt:+,} prompt and {completion:+,} completion tokens"
    if prompt <= 0 and completion <= 0:
        return said + ": calls the agent counted that swedeck did not see (a scorer's, a title's, a retry's)"
    if prompt >= 0 and completion >= 0:
        return said + ": calls swedeck counted that the agent did not (its count was cut short)"
    return said


def reconcile(report: CostReport) -> str:
    """`agrees`, or the difference and why (a model priced differently, a model swedeck has no
    price for, calls the agent counted that swedeck did not see)."""
    theirs = report.agent_total_usd or 0.0
    difference = report.total_usd - theirs
    if abs(difference) <= max(1e-9, AGREES_WITHIN * theirs) and not report.unpriced:
        return "agrees"
    reasons = []
    if report.unpriced:
        reasons.append("no price for " + ", ".join(sorted(report.unpriced)) + " (set model.prices)")
    for model, cost in sorted(report.agent_by_model.items()):
        mine = report.by_model.get(model)
        if mine is None and model not in report.unpriced:
            reasons.append(f"{model}: {cost:.6f} USD in calls swedeck did not see")
        elif mine is not None and abs(mine - cost) > max(1e-9, AGREES_WITHIN * cost):
            reasons.append(f"{model}: priced {mine:.6f} here, {cost:.6f} by the agent")
    return f"differs by {difference:+.6f} USD" + (f": {'; '.join(reasons)}" if reasons else "")
