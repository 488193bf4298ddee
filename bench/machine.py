"""What the figures were measured on and with."""

from __future__ import annotations

import os
import platform
from importlib import metadata

PACKAGES = {"swedeck": "swedeck", "textual": "textual", "litellm": "litellm", "mini-swe-agent": "mini-swe-agent"}


def machine() -> dict[str, object]:
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()}


def versions() -> dict[str, str | None]:
    """Installed versions from package metadata (never imports litellm); None if absent."""
    out: dict[str, str | None] = {}
    for key, distribution in PACKAGES.items():
        try:
            out[key] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            out[key] = None
    return out
