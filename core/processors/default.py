from __future__ import annotations

from typing import Literal

from ..messages import Message
from .base import Processor


class DefaultProcessor(Processor):
    """The history unchanged."""

    type: Literal["default"] = "default"

    def __call__(self, history: list[Message]) -> list[Message]:
        return list(history)
