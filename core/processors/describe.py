"""What the processors panel shows: each processor's fields, types, values and choices."""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

from .base import Processor


@dataclass(frozen=True)
class FieldInfo:
    name: str
    type: str
    value: Any
    allowed: tuple[Any, ...] | None
    """The choices when the field is a Literal or a bool; None for free values."""
    description: str | None = None


@dataclass(frozen=True)
class ProcessorInfo:
    index: int
    type: str
    enabled: bool
    fields: tuple[FieldInfo, ...]


def _type_name(annotation: Any) -> str:
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).replace("typing.", "")


def _allowed(annotation: Any) -> tuple[Any, ...] | None:
    if annotation is bool:
        return (True, False)
    if typing.get_origin(annotation) is typing.Literal:
        return typing.get_args(annotation)
    return None


def describe(processor: Processor, index: int) -> ProcessorInfo:
    fields = []
    for name, info in type(processor).model_fields.items():
        if name in ("type", "enabled"):
            continue
        annotation = info.annotation
        # Annotated[tuple[str, ...], ...] shows as its base type.
        while typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        fields.append(FieldInfo(name=name, type=_type_name(annotation), value=getattr(processor, name),
                                allowed=_allowed(annotation), description=info.description))
    return ProcessorInfo(index=index, type=processor.type, enabled=processor.enabled, fields=tuple(fields))
