"""The layers of a configuration (SPEC §3), before any of it is validated: the shipped
default, the user's file, `-c` files and shipped names, environment variables, `-c key=value`
overrides and command-line flags, merged in that order with where each value came from.

Apart from the models (`config.py`), so that a command that needs one section before its
first frame (the replay UI: `ui`) reads the layers without building every model.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec

from . import paths
from .errors import UsageError
from .whole_file import write_whole

SECTION_NAMES = ("agent", "model", "environment", "run", "ui", "batch")
"""The sections of a config (`config.SECTIONS`, from the models, is checked against it)."""

# Environment variables of mini-swe-agent's that swedeck honours with the same meaning.
MSWEA_VARIABLES = {
    "MSWEA_MODEL_NAME": ("model", "model_name"),
    "MSWEA_COST_TRACKING": ("model", "cost_tracking"),
    "MSWEA_USE_STREAMING": ("model", "use_streaming"),
    "MSWEA_STREAM_INCLUDE_USAGE": ("model", "stream_include_usage"),
    "MSWEA_STREAM_GUARD_ENABLED": ("model", "stream_guard_enabled"),
    "MSWEA_STREAM_GUARD_WINDOW": ("model", "stream_guard_window"),
    "MSWEA_STREAM_GUARD_TAG_THRESHOLD": ("model", "stream_guard_tag_threshold"),
}
_SWEDECK_VARIABLE = re.compile(r"^SWEDECK_([A-Z0-9_]+?)__([A-Z0-9_]+(?:__[A-Z0-9_]+)*)$")


class ConfigError(UsageError):
    """A configuration the user must fix. The CLI prints it and exits 2."""


class Layer(msgspec.Struct):
    """One source of configuration values (a file, the environment, the command line)."""

    source: str
    """Where the values came from, as the user would name it: a path, a variable, an argument."""
    data: dict[str, Any]


class _Merged(msgspec.Struct):
    """The layers merged so far, and which layer set each value."""

    data: dict[str, Any] = msgspec.field(default_factory=dict)
    sources: dict[tuple[str, ...], str] = msgspec.field(default_factory=dict)

    def add(self, layer: Layer) -> None:
        _merge(self.data, layer.data, (), layer.source, self.sources)

    def source_of(self, loc: tuple[Any, ...]) -> str:
        keys = tuple(str(part) for part in loc)
        for end in range(len(keys), 0, -1):
            if keys[:end] in self.sources:
                return self.sources[keys[:end]]
        return "the configuration"


def _merge(target: dict[str, Any], update: Mapping[str, Any], prefix: tuple[str, ...], source: str,
           sources: dict[tuple[str, ...], str]) -> None:
    for key, value in update.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and isinstance(target.get(key), dict):
            _merge(target[key], value, path, source, sources)
        else:
            target[key] = _plain(value)
            for known in [p for p in sources if p[: len(path)] == path]:
                del sources[known]
            _record_sources(value, path, source, sources)


def _record_sources(value: Any, path: tuple[str, ...], source: str, sources: dict[tuple[str, ...], str]) -> None:
    sources[path] = source
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _record_sources(inner, (*path, str(key)), source, sources)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _plain(inner) for key, inner in value.items()}
    return value


def _nest(keys: Iterable[str], value: Any) -> dict[str, Any]:
    keys = list(keys)
    out: dict[str, Any] = {keys[-1]: value}
    for key in reversed(keys[:-1]):
        out = {key: out}
    return out


MAX_VALUES = 100_000
"""A config larger than this once its aliases are expanded is refused: an alias bomb
('billion laughs') turns a few lines into a structure, and an error message, of hundreds of
megabytes."""


def _yaml() -> ModuleType:
    """PyYAML, imported when a file is parsed, not read from the cache (`load_yaml_file`): a
    replay's first frame reads two YAML files that seldom change, and the import is 10-15 ms."""
    import yaml

    return yaml


def yaml_error() -> type[Exception]:
    """`yaml.YAMLError`, for an `except` clause (evaluated only when something was raised)."""
    error: type[Exception] = _yaml().YAMLError
    return error


def load_yaml(text: str) -> Any:
    """A YAML document of the person's or ours (config, context windows, themes): safe types
    only, and no alias bomb. Read through libyaml's parser with PyYAML's safe constructors
    (`CSafeLoader`): the same values, about 9x faster (the shipped config: 1.2 ms, not 10.5),
    where PyYAML was built with it (its wheels are)."""
    yaml = _yaml()
    data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    _check_size(data)
    return data


def _check_size(data: Any) -> None:
    """Count the values as a reader of the config would see them (aliases expanded), up to a bound."""
    pending, seen = [data], 0
    while pending:
        value = pending.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise _yaml().YAMLError(f"more than {MAX_VALUES:,} values once its aliases are expanded (an alias bomb?)")
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def load_yaml_file(path: Path) -> Any:
    """`load_yaml` of a file's text, kept in the user's cache folder as JSON under the file's
    path, size, inode and modification time, so an unchanged file is not parsed again (the
    shipped config and the context-window map, at every start). Kept only when the JSON gives
    back exactly the same values (not for dates, non-text keys, NaN, huge integers). Raises
    what reading and parsing raise: OSError, UnicodeDecodeError, `yaml.YAMLError`."""
    info = path.stat()
    where = str(path.resolve())
    stamp = [where, info.st_size, info.st_ino, info.st_mtime_ns]
    cached = paths.user_cache_dir() / "yaml" / f"{hashlib.sha1(where.encode()).hexdigest()[:20]}.json"
    try:
        record = msgspec.json.decode(cached.read_bytes())
        if isinstance(record, dict) and record.get("stamp") == stamp:
            return record["data"]
    except (OSError, msgspec.MsgspecError):
        pass
    data = load_yaml(path.read_text(encoding="utf-8"))
    _keep(cached, stamp, data)
    return data


def _keep(cached: Path, stamp: list[Any], data: Any) -> None:
    try:
        encoded = msgspec.json.encode({"stamp": stamp, "data": data})
    except (TypeError, msgspec.MsgspecError):  # a value JSON has no form for
        return
    if repr(msgspec.json.decode(encoded)["data"]) != repr(data):
        return  # a date would come back as text, NaN as null: not the same values
    try:
        cached.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_whole(cached, encoded)  # 0600, the person's own only: a config may hold a key (`model_kwargs.api_key`)
    except OSError:
        pass  # a cache, not a requirement (a read-only home)


def parse_value(text: str) -> Any:
    """A command-line or environment value, read as YAML (`20`, `true`, `[a, b]`), else as text."""
    try:
        return load_yaml(text) if text.strip() else text
    except yaml_error():
        return text


def is_override(spec: str) -> bool:
    key = spec.split("=", 1)[0]
    return "=" in spec and bool(re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w-]*)+", key))  # a dict key may have dashes: a model name


def override_layer(spec: str) -> Layer:
    key, value = spec.split("=", 1)
    return Layer(f"command line '-c {spec}'", _nest(key.split("."), parse_value(value)))


def file_layer(path: Path) -> Layer:
    try:
        data = load_yaml_file(path)
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file (byte {exc.start} is not UTF-8)") from None
    except yaml_error() as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise ConfigError(f"{path}{line}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must be a mapping with sections {', '.join(SECTION_NAMES)}")
    return Layer(str(path), data)


def spec_layer(spec: str) -> Layer:
    """A `-c` argument: an override, a path, or the name of a shipped config."""
    if is_override(spec):
        return override_layer(spec)
    path = Path(spec).expanduser()
    if path.is_file():
        return file_layer(path)
    shipped = paths.shipped_config(spec.removesuffix(".yaml"))
    if shipped is not None and os.sep not in spec:
        return file_layer(shipped)
    names = ", ".join(paths.shipped_config_names())
    raise ConfigError(f"-c {spec}: no such file, and no shipped config of that name (shipped: {names})")


def environment_layers(environ: Mapping[str, str]) -> list[Layer]:
    layers = []
    for name, keys in MSWEA_VARIABLES.items():
        if name in environ:
            layers.append(Layer(f"environment variable {name}", _nest(keys, parse_value(environ[name]))))
    for name in sorted(environ):
        match = _SWEDECK_VARIABLE.match(name)
        if match:
            path = [match.group(1).lower(), *match.group(2).lower().split("__")]
            layers.append(Layer(f"environment variable {name}", _nest(path, parse_value(environ[name]))))
    return layers


def collect_layers(
    specs: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    user_config: bool = True,
) -> list[Layer]:
    """All layers in precedence order, lowest first. `flags` maps `section.field` to a value."""
    environ = os.environ if environ is None else environ
    default = paths.shipped_config("default")
    layers = [file_layer(default)] if default is not None else []
    user_file = paths.user_config_file()
    if user_config and user_file.is_file():
        layers.append(file_layer(user_file))
    spec_layers = [spec_layer(spec) for spec in specs]
    layers += [layer for layer in spec_layers if not layer.source.startswith("command line")]
    layers += environment_layers(environ)
    layers += [layer for layer in spec_layers if layer.source.startswith("command line")]
    for key, value in (flags or {}).items():
        if value is not None:
            layers.append(Layer(f"command line flag for {key}", _nest(key.split("."), value)))
    return layers


def merge_layers(layers: Iterable[Layer]) -> _Merged:
    out = _Merged()
    for layer in layers:
        out.add(layer)
    return out
