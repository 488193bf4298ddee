"""Models (SPEC §4): `get_model(config, spec)` picks the implementation by the model name.

Importing this package does not import litellm (§4.6); `LitellmModel` loads it on its
first query, or earlier through `preload_litellm()`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .base import Model, ModelSpec
from .litellm_loader import preload_litellm

if TYPE_CHECKING:
    from ..config import ModelConfig  # the config imports the models' names, not the reverse at run time

REPLAY_PREFIX = "replay:"


def _replay(config: ModelConfig, spec: ModelSpec) -> Model:
    from .replay_model import ReplayModel

    return ReplayModel(config, spec)


def _litellm(config: ModelConfig, spec: ModelSpec) -> Model:
    from .litellm_model import LitellmModel

    return LitellmModel(config, spec)


_REGISTRY: list[tuple[Callable[[str], bool], Callable[[ModelConfig, ModelSpec], Model]]] = [
    (lambda name: name.startswith(REPLAY_PREFIX), _replay),
    (lambda name: True, _litellm),
]


def get_model(config: ModelConfig, spec: ModelSpec | None = None) -> Model:
    name = config.model_name or ""
    spec = spec or ModelSpec()
    for matches, build in _REGISTRY:
        if matches(name):
            return build(config, spec)
    raise AssertionError("the registry ends with a catch-all")


__all__ = ["get_model", "preload_litellm", "REPLAY_PREFIX"]
