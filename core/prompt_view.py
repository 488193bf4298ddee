"""What the model saw at a step (SPEC §11.2): the history before the query, after the
processors recorded for that query (or the configured ones). Used by `swedeck prompt`,
the replay UI's prompt inspector and its what-if view."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError
from .messages import Message
from .models.cache_control import request_messages
from .processors.chain import ProcessorChain, config_hash, validate_processors
from .tokens import count_message, count_messages
from .trajectory.compaction import sendable
from .trajectory.fidelity import prompt_provenance
from .trajectory.model import Trajectory


@dataclass
class PromptLine:
    message: Message
    tokens: int
    source_index: int | None
    """Index of the history message it came from (None: made by a processor)."""
    changed: bool
    """A processor changed it (elided output, removed text, cache marks)."""


@dataclass
class StepPrompt:
    step: int
    """1-based; `len(steps) + 1` is the query after the last recorded message."""
    lines: list[PromptLine]
    total_tokens: int
    history_tokens: int
    """The same history without processors."""
    processors: list[dict[str, Any]]
    processors_source: str
    """`recorded` (from the trajectory), `configured` (-c / config) or `none`."""
    window: int | None
    errors: list[str] = field(default_factory=list)
    cache_mode: str | None = None
    """The recorded model's `set_cache_control`: the mark the model layer adds when it sends."""
    provenance: str = "recorded"
    """How the history is known: `recorded`, `reconstructed` or `unknown` (SPEC §9.3)."""

    def request_messages(self) -> list[dict[str, Any]]:
        """The messages exactly as the request carried them (API form, cache marks included)."""
        return request_messages([line.message for line in self.lines], self.cache_mode)


def prompt_summary(messages: int, total: int, window: int | None, *, step: int | None = None,
                   provenance: str | None = None, processors: list[dict[str, Any]] | None = None,
                   processors_source: str | None = None, without_processors: int | None = None,
                   dropped: int = 0, expected: int | None = None) -> str:
    """One line on a prompt, for both inspectors (the live one: what the model gets next; the
    replay's and what-if: what it got at a step): its messages and tokens against the window,
    how it is known, and what the processors did to it.

    `expected` is the meter's provider-anchored prediction of the next prompt (live only): then
    the local count and the prediction are both given, the prediction against the window."""
    parts = []
    if step is not None:
        parts.append(f"step {step}")
    if provenance is not None:
        parts.append(provenance)
    if processors is not None:
        names = ", ".join(str(p.get("type")) for p in processors) or "none"
        parts.append(f"processors ({processors_source}): {names}" if processors_source else f"processors: {names}")
    of = f"{window:,}" if window else "unknown window"
    parts.append(f"{messages} messages")
    if expected is not None:
        parts += [f"{total:,} tokens by local count", f"next ≈ {expected:,} / {of} by the provider's last count"]
    else:
        parts.append(f"{total:,} tokens / {of} (local count)")
    if window:
        parts.append(f"{100 * (total if expected is None else expected) / window:.1f}% of the window")
    if without_processors is not None:
        parts.append(f"without processors {without_processors:,} (saved {without_processors - total:,})")
    if dropped:
        parts.append(f"{dropped} history messages dropped by processors")
    return " · ".join(parts)


def step_summary(prompt: StepPrompt) -> str:
    """`prompt_summary` of the prompt at a recorded step."""
    return prompt_summary(len(prompt.lines), prompt.total_tokens, prompt.window, step=prompt.step,
                          provenance=prompt.provenance, processors=prompt.processors,
                          processors_source=prompt.processors_source, without_processors=prompt.history_tokens)


def resolve_step_number(trajectory: Trajectory, step: int) -> int:
    """1-based step number; negative counts from the end (-1 = last); len+1 = the next query."""
    count = len(trajectory.steps)
    number = count + 1 + step if step < 0 else step
    if not 1 <= number <= count + 1:
        raise UsageError(f"--step {step}: {trajectory.path} has steps 1..{count} (and {count + 1} = the next query)")
    return number


def history_before(trajectory: Trajectory, number: int) -> list[Message]:
    """The messages query `number` (1-based; len+1 = the next query) was sent, before
    processors: the request as the file recorded it where it did, else rebuilt from the
    conversation, with every compaction before it applied."""
    recorded = trajectory.recorded_prompts.get(number)
    if recorded is not None:
        return list(recorded)
    if number <= len(trajectory.steps):
        messages = trajectory.messages[: trajectory.steps[number - 1].prompt_end]
    else:
        messages = list(trajectory.messages)
    return without_requeried(sendable(messages))


def is_requeried(message: Message) -> bool:
    return bool(message.extra.requeried)


def without_requeried(history: list[Message]) -> list[Message]:
    """The history a query was sent, where SWE-agent requeried: its attempts are not in its
    history, and the requery's prompt is the history plus the last attempt and what it was
    told about it. So a requeried attempt is kept only right before the query after it."""
    tail = len(history)
    while tail and is_requeried(history[tail - 1]):
        tail -= 1
    last = next((i for i in range(len(history) - 1, tail - 1, -1) if history[i].role == "assistant"), len(history))
    return [message for message in history[:tail] if not is_requeried(message)] + history[last:]


def recorded_processors(trajectory: Trajectory, number: int) -> list[dict[str, Any]] | None:
    """The processor config step `number` (1-based; len+1 = the next query) was built with, as
    the file records it (data: see `without_recorded_code`); None when it recorded none."""
    if number > len(trajectory.steps):
        digest = trajectory.steps[-1].processors if trajectory.steps else None
    else:
        digest = trajectory.steps[number - 1].processors
    if not digest:
        return None
    if digest in trajectory.processors:
        return list(trajectory.processors[digest])
    # Files from before the start of a session was recorded: the header's config, if it is the one
    configured = _section(trajectory.info.config, "agent").get("history_processors")
    if isinstance(configured, list):
        try:
            if config_hash(validate_processors(configured)) == digest:
                return list(configured)
        except UsageError:
            return None
    return None


def without_recorded_code(processors: list[dict[str, Any]], notes: list[str]) -> list[dict[str, Any]]:
    """Recorded processors as data: any `custom_filter` left out (and said so in `notes`)."""
    out = []
    for processor in processors:
        name = processor.get("custom_filter") if isinstance(processor, dict) else None
        if name:
            notes.append(f"custom_filter {name} is recorded in the file but was not run: a trajectory never names "
                         "code to run (name it in your own config, or pass --trust-trajectory)")
            processor = {key: value for key, value in processor.items() if key != "custom_filter"}
        out.append(processor)
    return out


def _section(config: Any, name: str) -> dict[str, Any]:
    section = config.get(name) if isinstance(config, dict) else None
    return section if isinstance(section, dict) else {}


def step_prompt(trajectory: Trajectory, step: int, configured: list[Any] | None = None,
                window: int | None = None, *, trust_file: bool = False) -> StepPrompt:
    """The prompt of `step`. `configured` processors (non-empty) win over recorded ones.

    A file never names code to run: a `custom_filter` recorded in it is shown as recorded but
    not imported or called, unless `trust_file` (`--trust-trajectory`); the person's own
    config (`configured`) may name the same function."""
    number = resolve_step_number(trajectory, step)
    history = history_before(trajectory, number)
    recorded = recorded_processors(trajectory, number)
    notes: list[str] = []
    if configured:
        chain, source = ProcessorChain(configured), "configured"
    elif recorded is not None:
        runnable = recorded if trust_file else without_recorded_code(recorded, notes)
        try:
            chain, source = ProcessorChain(runnable), "recorded"
        except UsageError as error:  # the file's config, not the person's: say so, and show the history as it is
            notes.append(f"the processors recorded for this step cannot be used ({error}); shown without them")
            chain, source = ProcessorChain([]), "none"
    else:
        chain, source = ProcessorChain([]), "none"
    result = chain.apply(history)
    lines = prompt_lines(history, result.messages)
    if window is None and number <= len(trajectory.steps):
        context = trajectory.steps[number - 1].context
        window = context.window if context else None
    cache_mode = _section(trajectory.info.config, "model").get("set_cache_control")
    return StepPrompt(
        step=number, lines=lines, total_tokens=count_messages(result.messages),
        history_tokens=count_messages(history),
        processors=[p for p in recorded or [] if p.get("enabled", True)] if source == "recorded" else chain.active_config(),
        processors_source=source, window=window, errors=notes + result.errors,
        cache_mode=cache_mode if isinstance(cache_mode, str) else None,
        provenance=prompt_provenance(trajectory, number),
    )


def prompt_lines(history: list[Message], messages: list[Message]) -> list[PromptLine]:
    """The prompt's messages, each with its tokens, where it came from, and whether a
    processor changed it: both inspectors (live, replay) show these."""
    # Processors keep unchanged messages as the same objects and copy the ones they change.
    by_identity = {id(message): index for index, message in enumerate(history)}
    same_length = len(messages) == len(history)
    lines = []
    for position, message in enumerate(messages):
        index = by_identity.get(id(message))
        changed = index is None
        if index is None and same_length:
            index = position
        lines.append(PromptLine(message, count_message(message), index, changed))
    return lines
