"""History processors (SPEC §7): the registry and the discriminated config type.

Adding a processor touches its own file and one line of `PROCESSORS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Union

from pydantic import Field

from .base import Processor, ProcessorError
from .cache_control import CacheControl
from .context_filter import ContextFilter
from .default import DefaultProcessor
from .last_n_observations import LastNObservations
from .manager import Manager
from .orchestrator import Orchestrator
from .remove_regex import RemoveRegex
from .summarize import Summarize
from .tag_tool_call_observations import TagToolCallObservations
from .worker import Worker

PROCESSORS: dict[str, type[Processor]] = {
    "default": DefaultProcessor,
    "last_n_observations": LastNObservations,
    "tag_tool_call_observations": TagToolCallObservations,
    "cache_control": CacheControl,
    "remove_regex": RemoveRegex,
    "context_filter": ContextFilter,
    "worker": Worker,
    "orchestrator": Orchestrator,
    "manager": Manager,
    "summarize": Summarize,
}

if TYPE_CHECKING:
    ProcessorConfig = Processor  # to a type checker: any entry of PROCESSORS
else:  # to pydantic: the union of them all, told apart by `type`
    ProcessorConfig = Annotated[Union[tuple(PROCESSORS.values())], Field(discriminator="type")]  # noqa: UP007

__all__ = ["PROCESSORS", "Processor", "ProcessorConfig", "ProcessorError"]
