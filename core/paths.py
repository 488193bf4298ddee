"""Where swedeck keeps things: shipped resources and the user's config and data folders.

`SWEDECK_CONFIG_DIR`, `SWEDECK_DATA_DIR` and `SWEDECK_CACHE_DIR` override the platform
folders (tests and portable setups use them).
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import platformdirs

APP = "swedeck"


def user_config_dir() -> Path:
    return Path(os.environ.get("SWEDECK_CONFIG_DIR") or platformdirs.user_config_dir(APP))


def user_data_dir() -> Path:
    return Path(os.environ.get("SWEDECK_DATA_DIR") or platformdirs.user_data_dir(APP))


def user_cache_dir() -> Path:
    """What swedeck can make again from other files (parsed YAML): deleting it loses nothing."""
    return Path(os.environ.get("SWEDECK_CACHE_DIR") or platformdirs.user_cache_dir(APP))


def user_config_file() -> Path:
    """The user's own config layer, read between the shipped default and `-c` files."""
    return user_config_dir() / "config.yaml"


def trajectories_dir() -> Path:
    return user_data_dir() / "trajectories"


def shipped_configs_dir() -> Path:
    """The `configs/` folder, from a checkout or from an installed wheel."""
    return Path(str(resources.files("swedeck.configs")))


def shipped_config(name: str) -> Path | None:
    """A shipped config by name (`default`, `swebench`, `demo`), or None."""
    path = shipped_configs_dir() / f"{name}.yaml"
    return path if path.is_file() else None


def shipped_config_names() -> list[str]:
    return sorted(p.stem for p in shipped_configs_dir().glob("*.yaml") if p.stem != "model_context_windows")
