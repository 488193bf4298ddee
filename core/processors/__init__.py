"""History processors (SPEC §7): the registry and the discriminated config type.

Adding a processor touches its own file and one line of `PROCESSORS`.
"""

from __future__ import annotations

from typing import Annotated, Union

from pydantic import Field

from .base import Processor
from .default import DefaultProcessor

PROCESSORS: dict[str, type[Processor]] = {
    "default": DefaultProcessor,
}

ProcessorConfig = Annotated[Union[tuple(PROCESSORS.values())], Field(discriminator="type")]  # noqa: UP007

__all__ = ["PROCESSORS", "Processor", "ProcessorConfig"]
