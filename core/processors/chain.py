"""The processors at run time: apply, toggle, re-parameterize, hash (SPEC §7, §6.2, §11.2).

The agent builds each prompt with `apply`; the TUI's processors panel toggles and edits
them; each query records `config_hash()` and the trajectory keeps `configs_by_hash` so
any step's prompt can be rebuilt later with `rebuild`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Iterable

from pydantic import TypeAdapter, ValidationError

from ..errors import UsageError
from ..messages import Message
from . import PROCESSORS, ProcessorConfig
from .base import Processor
from .describe import FieldInfo, ProcessorInfo, describe
from .report import TokenReport, token_report

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
    history: list[Message] = field(default_factory=list, repr=False)
    stages: list[tuple[int, str, list[Message]]] = field(default_factory=list, repr=False)

    @cached_property
    def report(self) -> TokenReport:
        """Tokens before and after each applied processor; computed on first use."""
        return token_report(self.history, self.stages)


class ProcessorChain:
    """An ordered list of processors that can be changed while the agent runs.

    Changes swap in a new list (copy on write), so a prompt build in another thread always
    sees one consistent configuration.
    """

    def __init__(self, processors: Iterable[Any] = ()):
        self._lock = threading.Lock()
        self._processors: tuple[Processor, ...] = tuple(validate_processors(processors))
        self.configs_by_hash: dict[str, list[dict[str, Any]]] = {}
        self._remember()

    @property
    def processors(self) -> tuple[Processor, ...]:
        return self._processors

    def config_hash(self) -> str:
        return config_hash(self._processors)

    def active_config(self) -> list[dict[str, Any]]:
        return _active_config(self._processors)

    def _remember(self) -> None:
        self.configs_by_hash.setdefault(self.config_hash(), self.active_config())

    def _replace(self, index: int, processor: Processor) -> None:
        with self._lock:
            if not 0 <= index < len(self._processors):
                raise UsageError(f"no history processor at position {index} (there are {len(self._processors)})")
            items = list(self._processors)
            items[index] = processor
            self._processors = tuple(items)
            self._remember()

    def _at(self, index: int) -> Processor:
        if not 0 <= index < len(self._processors):
            raise UsageError(f"no history processor at position {index} (there are {len(self._processors)})")
        return self._processors[index]

    def toggle(self, index: int, enabled: bool | None = None) -> Processor:
        """Switch processor `index` on or off (flip when `enabled` is None); returns the new one."""
        current = self._at(index)
        new = current.model_copy(update={"enabled": (not current.enabled) if enabled is None else enabled})
        self._replace(index, new)
        return new

    def set_params(self, index: int, **params: Any) -> Processor:
        """Replace some parameters of processor `index`, validated like the config file."""
        current = self._at(index)
        if "type" in params and params["type"] != current.type:
            raise UsageError(f"cannot change the type of history processor {index} ({current.type})")
        data = {**current.model_dump(), **params}
        try:
            new = PROCESSORS[current.type].model_validate(data)
        except ValidationError as exc:
            raise UsageError(f"invalid parameters for history processor {current.type}: {_first_error(exc)}") from None
        self._replace(index, new)
        return new

    def describe(self) -> list[ProcessorInfo]:
        """Every processor with its fields, for a settings panel."""
        return [describe(processor, index) for index, processor in enumerate(self._processors)]

    def apply(self, history: list[Message]) -> ChainResult:
        """The prompt history: the enabled processors in order. A processor that fails leaves
        the prompt as it was before it, and its error is reported."""
        processors = self._processors
        current = list(history)
        errors: list[str] = []
        stages: list[tuple[int, str, list[Message]]] = []
        for index, processor in enumerate(processors):
            if not processor.enabled:
                continue
            try:
                current = processor(current)
            except Exception as exc:  # one broken processor must not stop the agent
                errors.append(f"{processor.type}: {exc}")
            stages.append((index, processor.type, current))
        return ChainResult(messages=current, errors=errors, history=list(history), stages=stages)

    def estimate(self, history: list[Message]) -> TokenReport:
        """Tokens of the next prompt, per processor (the meter's "next ≈ N" is `.after`)."""
        return self.apply(history).report


def rebuild(history: list[Message], processors_config: Iterable[Any]) -> ChainResult:
    """The prompt a query saw, from the history before it and its recorded processor config."""
    return ProcessorChain(processors_config).apply(history)


__all__ = [
    "ChainResult", "FieldInfo", "ProcessorChain", "ProcessorInfo", "TokenReport",
    "config_hash", "rebuild", "validate_processors",
]
