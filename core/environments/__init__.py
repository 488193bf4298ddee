"""Environments (SPEC §8), found by `environment_class` in one table.

Cheap to import: docker-py is imported only when a Docker environment is created."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from ..config import EnvironmentConfig
from ..redact import Redactor
from .base import Environment, ExecutionResult

ENVIRONMENTS = {
    "local": ("local", "LocalEnvironment"),
    "docker": ("docker", "DockerEnvironment"),
}


def get_environment(config: EnvironmentConfig, session_id: str, redactor: Redactor | None = None) -> Environment:
    module, name = ENVIRONMENTS[config.environment_class]
    cls: Callable[..., Environment] = getattr(import_module(f".{module}", __name__), name)
    return cls(config, session_id, redactor=redactor)


__all__ = ["ENVIRONMENTS", "Environment", "ExecutionResult", "get_environment"]
