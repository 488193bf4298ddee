"""Docker test helpers: a config for the offline test image, and skip-or-fail when no engine answers."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from swedeck.core.config import EnvironmentConfig
from swedeck.core.environments.base import Environment

TEST_IMAGE = "swedeck-test:latest"


def docker_client() -> Any:
    """A client for the real engine; skips (or fails when SWEDECK_REQUIRE_DOCKER=1) without one."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
        client.images.get(TEST_IMAGE)
    except Exception as error:  # noqa: BLE001 - any failure means no usable engine
        reason = f"no Docker engine with {TEST_IMAGE} (run .ci/docker-up): {error}"
        if os.environ.get("SWEDECK_REQUIRE_DOCKER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return client


def docker_config(**overrides: Any) -> EnvironmentConfig:
    docker_client()
    overrides.setdefault("image", TEST_IMAGE)
    return EnvironmentConfig(environment_class="docker", **overrides)


def unique_session(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@contextmanager
def started_environment(kind: str, tmp_path: Path, name: str) -> Iterator[Environment]:
    """A started local (in `tmp_path`) or Docker environment, closed after the block."""
    from swedeck.core.environments import get_environment

    config = docker_config() if kind == "docker" else EnvironmentConfig(cwd=str(tmp_path))
    env = get_environment(config, unique_session(f"{name}-{kind}"))  # a parallel test has its own container
    env.start()
    try:
        yield env
    finally:
        env.close()
