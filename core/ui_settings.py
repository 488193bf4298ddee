"""The `ui` section of the config (SPEC §3) on its own, with what reads it from the layers:
the replay UI needs it for its first frame (the person's theme and keymap) and nothing else
of the config until `p` or `f`, so it need not build every model first (bench B2). It is a
msgspec Struct, not a pydantic model, so that the replay's first frame never imports pydantic;
`config.SwedeckConfig` holds it as its `ui` and checks it here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import msgspec

from .config_layers import ConfigError, _Merged, collect_layers, merge_layers


class UIConfig(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    theme: str = "swedeck-dark"
    keymap: dict[str, str] = {}
    """Binding id -> keys, e.g. `{approve: "y,enter", processors: "f2"}`."""
    layout: Literal["auto", "side-by-side", "stacked"] = "auto"


UI_FIELDS = UIConfig.__struct_fields__


def ui_config(data: object) -> UIConfig:
    """The `ui` section from its data (an instance as it is); `ValueError` names the first
    problem (`ui_problems` names them all)."""
    if isinstance(data, UIConfig):
        return data
    return msgspec.convert({} if data is None else data, UIConfig)


def ui_problems(merged: _Merged) -> list[str]:
    """What is wrong with the merged config's `ui` section, a line each, as
    `config.build_config` reports every section: `SOURCE: ui.FIELD: problem (got VALUE)`."""
    data = merged.data.get("ui")
    if data is None:
        return []
    if not isinstance(data, Mapping):
        return [f"  {merged.source_of(('ui',))}: ui: expected a mapping (got {data!r})"]
    try:
        ui_config(data)
        return []  # the usual case: no field needs to be looked at on its own
    except msgspec.ValidationError:
        pass
    lines = []
    for key, value in data.items():
        if key not in UI_FIELDS:
            problem = f"unknown field; allowed here: {', '.join(UI_FIELDS)}"
            lines.append(f"  {merged.source_of(('ui', key))}: ui.{key}: {problem}")
            continue
        # a mapping (the keymap) is checked entry by entry, so an entry is reported where it was set
        parts = [((key, inner), {inner: item}, item) for inner, item in value.items()] \
            if isinstance(value, Mapping) and value and _misfit(key, {}) is None else [((key,), value, value)]
        for loc, part, given in parts:
            message = _misfit(key, part)
            if message is not None:
                where = ".".join(("ui", *map(str, loc)))
                lines.append(f"  {merged.source_of(('ui', *loc))}: {where}: {_problem(key, message, given)}")
    return lines


def _misfit(key: str, value: object) -> str | None:
    """What msgspec says is wrong with `value` for the field `key`; None when it fits."""
    try:
        msgspec.convert({key: value}, UIConfig)
    except msgspec.ValidationError as error:
        return str(error).partition(" - at ")[0]
    return None


def _problem(key: str, message: str, value: object) -> str:
    """A field's problem as the config's pydantic sections word theirs."""
    import msgspec.inspect

    field = next(field for field in msgspec.inspect.type_info(UIConfig).fields if field.name == key)  # type: ignore[attr-defined]
    if isinstance(field.type, msgspec.inspect.LiteralType):
        *others, last = map(repr, field.type.values)
        message = f"input should be {', '.join(others)} or {last}"
    return f"{message[0].lower()}{message[1:]} (got {value!r})"


def load_ui_settings(specs: Iterable[str] = (), flags: Mapping[str, Any] | None = None) -> UIConfig:
    """The `ui` section as the whole config would have it (the same layers, in the same order)."""
    merged = merge_layers(collect_layers(specs, flags=flags))
    problems = ui_problems(merged)
    if problems:
        raise ConfigError("\n".join(["invalid configuration:", *problems]))
    return ui_config(merged.data.get("ui"))
