"""Configuration (SPEC §3): pydantic models and the layered loader.

Layers, later wins, nested mappings merge, lists are replaced:

1. the shipped `configs/default.yaml`
2. the user's `config.yaml` in the user config dir, if it exists
3. config files given with `-c NAME|PATH`, in order
4. environment variables (`MSWEA_*` and `SWEDECK_<SECTION>__<FIELD>`)
5. `-c key.path=value` overrides, in order, then explicit command-line flags

Every value remembers which layer set it, so an invalid config is reported against the
file, variable or argument that holds the bad value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jinja2
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from . import paths
from .errors import UsageError
from .processors import ProcessorConfig

_DOTTED_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_TEMPLATES = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def _check_template(value: str) -> str:
    try:
        _TEMPLATES.parse(value)
    except jinja2.TemplateSyntaxError as exc:
        raise ValueError(f"not a valid Jinja2 template: {exc.message} (line {exc.lineno})") from None
    return value


AGENT_CLASS_NAMES = ("default", "interactive", "reasoning_tool_call", "text")
"""The built-in agent classes' names (`agent.AGENT_CLASSES` maps each to its class; the
config names them itself so that it never imports the agent, which imports it)."""


class CompactionConfig(_Section):
    """How compactions by the `summarize` processor are applied (SPEC §17, docs/history-processors.md)."""

    confirm: bool = True
    """In confirm mode a summary is shown before it is used: accept it, edit it, or keep the full
    history. Yolo, human and headless sessions (and batches) use it at once."""
    on_context_exceeded: bool = True
    """A prompt the provider refuses as too long is compacted first (with the `summarize`
    processor's settings, else its defaults) when its summary is predicted to fit; else the
    smallest elision is offered or applied (`on_context_exceeded`)."""


class AgentConfig(_Section):
    agent_class: str = "default"
    """`default` | `interactive` (alias of default) | `reasoning_tool_call` | `text` | `package.module:Class`."""
    system_template: str = ""
    instance_template: str = "{{ task }}"
    observation_template: str = "{{ output }}"
    format_error_template: str = "{{ error }}"
    rejected_template: str = ("Commands not executed. The user rejected your command with the following message: "
                              "{{ comment }}")
    """Answers a command the person rejected; gets `comment` (what they typed, or `(no comment)`)."""
    not_run_template: str = "Command not executed: {{ reason }}"
    """Answers a command that will not run (interrupted, after a submission); gets `reason`."""
    step_limit: int = Field(0, ge=0)
    """0 means no limit."""
    cost_limit: float = Field(3.0, ge=0)
    """Dollars; 0 means no limit."""
    wall_time_limit_s: float = Field(0, ge=0)
    """Seconds; 0 means no limit."""
    mode: Literal["confirm", "yolo", "human"] = "confirm"
    whitelist_actions: list[str] = []
    """Regexes: matching commands never ask for confirmation."""
    confirm_exit: bool = True
    max_consecutive_format_errors: int = Field(3, ge=1)
    history_processors: list[ProcessorConfig] = []
    on_context_exceeded: Literal["ask", "fit", "stop"] = "ask"
    """When the provider refuses a prompt as too long: `ask` (interactive: offer the smallest
    processor change that fits; headless: stop), `fit` (apply that change and retry, headless
    too), `stop` (end with ContextWindowExceeded)."""
    compaction: CompactionConfig = CompactionConfig()

    @field_validator("agent_class")
    @classmethod
    def _known_agent_class(cls, value: str) -> str:
        if value in AGENT_CLASS_NAMES or _DOTTED_PATH.match(value):
            return value
        allowed = ", ".join(AGENT_CLASS_NAMES)
        raise ValueError(f"unknown agent class {value!r}; allowed: {allowed}, or package.module:Class")

    @field_validator("system_template", "instance_template", "observation_template", "format_error_template",
                     "rejected_template", "not_run_template")
    @classmethod
    def _valid_template(cls, value: str) -> str:
        return _check_template(value)

    @field_validator("whitelist_actions")
    @classmethod
    def _valid_regexes(cls, value: list[str]) -> list[str]:
        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regex {pattern!r}: {exc}") from None
        return value


class RetryConfig(_Section):
    attempts: int = Field(6, ge=1)
    """Total tries of one query, the first included."""
    backoff_min_s: float = Field(1, ge=0)
    backoff_max_s: float = Field(60, ge=0)


class ModelConfig(_Section):
    model_name: str | None = None
    """A litellm model string (`openai/gpt-4o`, `hosted_vllm/...`) or `replay:PATH`."""
    model_kwargs: dict[str, Any] = {}
    cost_tracking: Literal["default", "ignore_errors"] = "default"
    use_streaming: bool = True
    stream_include_usage: bool = True
    stream_process: bool = True
    """Run litellm's calls in a helper process (`models/stream_worker.py`), so parsing a stream
    does not compete with the UI for this process's GIL; false runs them in a thread here."""
    usage_fallback: Literal["estimate", "requery", "none"] = "estimate"
    stream_guard_enabled: bool = False
    stream_guard_window: int = Field(8192, ge=1)
    stream_guard_tag_threshold: int = Field(50, ge=1)
    tool_choice: str | dict[str, Any] | None = None
    require_reasoning: bool = False
    set_cache_control: Literal["default_end"] | None = None
    max_tokens: int | None = Field(8192, ge=1)
    """Tokens one answer may have (a model that loops stops here, not after minutes); lowered to
    the model's own output limit when litellm knows it; `null` leaves it to the provider; a
    `max_tokens` in `model_kwargs` wins."""
    format_error_template: str = "{{ error }}"
    timeout_s: float = Field(600, gt=0)
    stall_timeout_s: float = Field(300, ge=0)
    """A streamed answer that adds nothing (no text, reasoning or tool-call delta) for this long
    is a cut stream, retried: empty deltas and `: ping` comments keep a connection open but
    are no progress (0: never)."""
    retry: RetryConfig = RetryConfig()
    context_window: int | None = Field(None, gt=0)
    """Overrides the context-window map and litellm's model info."""

    @field_validator("format_error_template")
    @classmethod
    def _valid_template(cls, value: str) -> str:
        return _check_template(value)


class EnvironmentConfig(_Section):
    environment_class: Literal["local", "docker"] = "local"
    cwd: str | None = None
    """Working directory: the current folder for local, the image's for docker when unset."""
    env: dict[str, str] = {}
    forward_env: list[str] = []
    """Names of host environment variables passed into the environment."""
    timeout: float = Field(60, gt=0)
    """Seconds one command may run."""
    output_limit: int = Field(10_000, ge=100)
    mask_secret_shapes: bool = False
    """Also mask well-known token shapes (`ghp_…`, `sk-…`, `AKIA…`, private keys) in the output
    the model gets; they are always masked in trajectories and on screen (docs/security.md)."""
    """Characters of output the model gets; longer output keeps head and tail."""
    post_startup_commands: list[str] = []
    post_startup_command_timeout: float = Field(500, gt=0)
    image: str | None = None
    image_name: str | None = None
    docker_image: str | None = None
    instance_id: str | None = None
    container_name: str | None = None
    network: str | None = None
    run_args: dict[str, Any] = {}
    """Extra keyword arguments for docker-py's `containers.run` (volumes, mem_limit, ...)."""
    remove_on_close: bool = True


class RunConfig(_Section):
    output: str | None = None
    """Trajectory path; default: a new file under the user data dir."""
    keep_jsonl: bool = False


class UIConfig(_Section):
    theme: str = "swedeck-dark"
    keymap: dict[str, str] = {}
    """Binding id -> keys, e.g. `{approve: "y,enter", processors: "f2"}`."""
    layout: Literal["auto", "side-by-side", "stacked"] = "auto"


class BatchConfig(_Section):
    verify: str | None = None
    """A shell command run in each instance's environment right after its agent ends (before
    the container is removed), when the instance names none (`verify`): exit 0 is resolved."""
    verify_timeout_s: float = Field(600, gt=0)
    """Seconds the verifier may run; longer is an infra failure."""
    run_verifier: bool = True
    """False (`swedeck batch --no-verify`): no instance is graded, the named verifiers included."""


class SwedeckConfig(_Section):
    agent: AgentConfig = AgentConfig()
    model: ModelConfig = ModelConfig()
    environment: EnvironmentConfig = EnvironmentConfig()
    run: RunConfig = RunConfig()
    ui: UIConfig = UIConfig()
    batch: BatchConfig = BatchConfig()


SECTIONS = tuple(SwedeckConfig.model_fields)

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


@dataclass
class Layer:
    source: str
    """Where the values came from, as the user would name it: a path, a variable, an argument."""
    data: dict[str, Any]


@dataclass
class _Merged:
    data: dict[str, Any] = field(default_factory=dict)
    sources: dict[tuple[str, ...], str] = field(default_factory=dict)

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


def load_yaml(text: str) -> Any:
    data = yaml.safe_load(text)
    _check_size(data)
    return data


def _check_size(data: Any) -> None:
    """Count the values as a reader of the config would see them (aliases expanded), up to a bound."""
    pending, seen = [data], 0
    while pending:
        value = pending.pop()
        seen += 1
        if seen > MAX_VALUES:
            raise yaml.YAMLError(f"more than {MAX_VALUES:,} values once its aliases are expanded (an alias bomb?)")
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def parse_value(text: str) -> Any:
    """A command-line or environment value, read as YAML (`20`, `true`, `[a, b]`), else as text."""
    try:
        return load_yaml(text) if text.strip() else text
    except yaml.YAMLError:
        return text


def is_override(spec: str) -> bool:
    key = spec.split("=", 1)[0]
    return "=" in spec and bool(re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)+", key))


def override_layer(spec: str) -> Layer:
    key, value = spec.split("=", 1)
    return Layer(f"command line '-c {spec}'", _nest(key.split("."), parse_value(value)))


def file_layer(path: Path) -> Layer:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a text file (byte {exc.start} is not UTF-8)") from None
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise ConfigError(f"{path}{line}: not valid YAML: {getattr(exc, 'problem', None) or exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config file must be a mapping with sections {', '.join(SECTIONS)}")
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


def build_config(layers: Iterable[Layer]) -> SwedeckConfig:
    merged = _Merged()
    for layer in layers:
        merged.add(layer)
    try:
        return SwedeckConfig.model_validate(merged.data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, merged)) from None


def load_config(
    specs: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    user_config: bool = True,
) -> SwedeckConfig:
    return build_config(collect_layers(specs, environ, flags, user_config))


def _describe(exc: ValidationError, merged: _Merged) -> str:
    from .redact import Redactor, is_secret_name, secret_values

    # An error shows what was given: never a secret's value (by name, by value, by shape)
    redactor = Redactor(secret_values(merged.data))
    lines = ["invalid configuration:"]
    for error in exc.errors(include_url=False):
        loc = tuple(part for part in error["loc"])
        where = ".".join(str(part) for part in loc) or "(top level)"
        source = merged.source_of(loc)
        if error["type"] == "extra_forbidden":
            allowed = ", ".join(_allowed_fields(loc[:-1]))
            problem = f"unknown field; allowed here: {allowed}"
        else:
            message = error["msg"]
            message = message.removeprefix("Value error, ")
            given = "'***'" if any(is_secret_name(str(part)) for part in loc) else repr(error.get("input"))
            problem = f"{message[0].lower()}{message[1:]} (got {given})"
        lines.append(redactor.text(f"  {source}: {where}: {problem}"))
    return "\n".join(lines)


def _allowed_fields(loc: tuple[Any, ...]) -> list[str]:
    model: Any = SwedeckConfig
    for part in loc:
        info = getattr(model, "model_fields", {}).get(str(part))
        if info is None:
            if isinstance(part, str) and hasattr(model, "model_fields"):
                return list(model.model_fields)
            continue
        model = info.annotation
    fields = getattr(model, "model_fields", None)
    return list(fields) if fields else []


def dump_yaml(config: SwedeckConfig) -> str:
    """The resolved config as YAML, secrets masked."""
    from .redact import redact_mapping

    data = redact_mapping(config.model_dump(mode="json"))
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings (templates) as `|` blocks, the way people write them."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not any(c in value for c in "\t\r") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _represent_str)


def require_model(config: SwedeckConfig, what: str = "a live session") -> str:
    """The configured model's name; a usage error (exit 2) before anything starts when none is."""
    name = config.model.model_name
    if not name:
        raise UsageError(f"{what} needs a model: pass -m NAME (e.g. -m openai/gpt-4o) or set model.model_name")
    return name
