"""litellm's model map (prices, context windows), read from the file the pinned litellm ships,
without importing litellm (seconds): the config's check of a model's provider, the cost
reports' prices. The core's base, under `models/` (which imports litellm itself)."""

from __future__ import annotations

import os
from typing import Any

_MAP = "model_prices_and_context_window_backup.json"


_model_map: dict[str, Any] | None = None


def model_map() -> dict[str, Any] | None:
    """litellm's model map (prices, windows), read from the file the pinned litellm ships, without
    importing litellm (seconds); None when that file cannot be found or read. Read once."""
    global _model_map
    if _model_map is None:
        import importlib.util
        import json

        spec = importlib.util.find_spec("litellm")
        if spec is None or not spec.submodule_search_locations:
            return None
        try:
            with open(os.path.join(spec.submodule_search_locations[0], _MAP), "rb") as file:
                known = json.load(file)
        except (OSError, ValueError):
            return None
        _model_map = known if isinstance(known, dict) else {}
    return _model_map


def names_a_provider(model_name: str) -> bool:
    """Whether litellm can tell which provider serves `model_name` without asking the network:
    a `provider/model` string, or a bare name litellm's own model map knows (`gpt-4o`). True when
    the map cannot be read (litellm then says what it says)."""
    if "/" in model_name or model_name.startswith("replay:"):
        return True
    known = model_map()
    return known is None or model_name in known
