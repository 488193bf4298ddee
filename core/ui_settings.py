"""The `ui` section of the config (SPEC §3) on its own, with what reads it from the layers:
the replay UI needs it for its first frame (the person's theme and keymap) and nothing else
of the config until `p` or `f`, so it need not build every model first (bench B2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .config_layers import ConfigError, collect_layers, merge_layers


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class UIConfig(_Section):
    theme: str = "swedeck-dark"
    keymap: dict[str, str] = {}
    """Binding id -> keys, e.g. `{approve: "y,enter", processors: "f2"}`."""
    layout: Literal["auto", "side-by-side", "stacked"] = "auto"


def load_ui_settings(specs: Iterable[str] = (), flags: Mapping[str, Any] | None = None) -> UIConfig:
    """The `ui` section as the whole config would have it (the same layers, in the same order)."""
    merged = merge_layers(collect_layers(specs, flags=flags))
    try:
        return UIConfig.model_validate(merged.data.get("ui") or {})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in ("ui", *error["loc"]))
        raise ConfigError(f"{where}: {error['msg']} (set in {merged.source_of(('ui', *error['loc']))})") from None
