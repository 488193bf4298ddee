"""The processors at run time: validate, apply, hash (SPEC §7, §6.2, §11.2).

The agent builds each prompt with `apply` (through `agent.prompt.PromptBuilder`); a change
(the processors panel) swaps in a new chain. Each query records `config_hash()`, the
trajectory maps the hash to the config (`processors_change` events), and
`prompt_view.step_prompt` rebuilds any step's prompt from it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..errors import UsageError
from ..messages import Message
from . import ProcessorConfig
from .base import Processor

_CONFIG_LIST = TypeAdapter(list[ProcessorConfig])
HASH_LENGTH = 12


def validate_processors(raw: Iterable[Any]) -> list[Processor]:
    """Processor models from models or plain dicts (`{"type": "last_n_observations", "n": 5}`)."""
    try:
        return list(_CONFIG_LIST.validate_python(list(raw)))
    except ValidationError as exc:
        raise UsageError(f"invalid history processor config: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def config_hash(processors: Iterable[Processor]) -> str:
    """Short sha256 of the canonical JSON of the enabled processors (disabled ones change nothing)."""
    return hashlib.sha256(_canonical(processors).encode()).hexdigest()[:HASH_LENGTH]


def _active_config(processors: Iterable[Processor]) -> list[dict[str, Any]]:
    return [p.model_dump(mode="json") for p in processors if p.enabled]


def _canonical(processors: Iterable[Processor]) -> str:
    return json.dumps(_active_config(processors), sort_keys=True, separators=(",", ":"))


@dataclass
class ChainResult:
    messages: list[Message]
    errors: list[str] = field(default_factory=list)


class ProcessorChain:
    """An ordered list of validated processors, applied in order to build a prompt."""

    def __init__(self, processors: Iterable[Any] = ()):
        self._processors: tuple[Processor, ...] = tuple(validate_processors(processors))

    @property
    def processors(self) -> tuple[Processor, ...]:
        return self._processors

    def config_hash(self) -> str:
        return config_hash(self._processors)

    def active_config(self) -> list[dict[str, Any]]:
        return _active_config(self._processors)

    def apply(self, history: list[Message]) -> ChainResult:
        """The prompt history: the enabled processors in order. A processor that fails leaves
        the prompt as it was before it, and its error is reported."""
        current = list(history)
        errors: list[str] = []
        for processor in self._processors:
            if not processor.enabled:
                continue
            try:
                current = processor(current)
            except Exception as exc:  # noqa: BLE001 - one broken processor must not stop the agent
                errors.append(f"{processor.type}: {exc}")
        return ChainResult(messages=current, errors=errors)


__all__ = ["ChainResult", "ProcessorChain", "config_hash", "validate_processors"]
