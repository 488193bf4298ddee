"""Which image a Docker environment runs (SPEC §8): `image_name` (SWE-bench-Live
MultiLang) > `docker_image` > `image` > derived from a SWE-bench `instance_id`."""

from __future__ import annotations

from ..config import EnvironmentConfig
from ..errors import UsageError


def swebench_image(instance_id: str) -> str:
    """The upstream convention: `django__django-11099` -> `swebench/sweb.eval.x86_64.django_1776_django-11099:latest`."""
    return f"swebench/sweb.eval.x86_64.{instance_id.replace('__', '_1776_')}:latest".lower()


def resolve_image(config: EnvironmentConfig) -> str:
    for name in (config.image_name, config.docker_image, config.image):
        if name:
            return name
    if config.instance_id:
        return swebench_image(config.instance_id)
    raise UsageError("the docker environment needs an image: set environment.image (or image_name, docker_image, instance_id)")
