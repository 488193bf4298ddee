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

import re
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

import jinja2
import msgspec
import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, ValidationError, field_validator

from .config_layers import (
    MSWEA_VARIABLES,
    SECTION_NAMES,
    ConfigError,
    Layer,
    _Merged,
    collect_layers,
    file_layer,
    load_yaml,
    merge_layers,
    parse_value,
    spec_layer,
)
from .errors import UsageError
from .processors import ProcessorConfig
from .ui_settings import UIConfig, ui_config, ui_problems


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


_DOTTED_PATH = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_TEMPLATES = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)


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


class AcpConfig(_Section):
    """An ACP agent instead of swedeck's own (SPEC §19, docs/acp.md)."""

    command: str = ""
    """A preset (`claude-code`, `codex`) or the agent's command line; empty: swedeck's own agent."""
    upstream: str = ""
    """Where the agent's model requests go through the record's endpoint; empty: each provider's own."""


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
    rules: list[str] = []
    """Approval rule files of Claude Code, Codex, Gemini CLI or OpenCode (one owner's), read with
    their owner's semantics (docs/rules.md): in confirm mode what they allow runs without asking,
    and in every mode what they deny is rejected; an ACP agent's permission requests too."""
    confirm_exit: bool = True
    max_consecutive_format_errors: int = Field(3, ge=1)
    history_processors: list[ProcessorConfig] = []
    on_context_exceeded: Literal["ask", "fit", "stop"] = "ask"
    """When the provider refuses a prompt as too long: `ask` (interactive: offer the smallest
    processor change that fits; headless: stop), `fit` (apply that change and retry, headless
    too), `stop` (end with ContextWindowExceeded)."""
    compaction: CompactionConfig = CompactionConfig()
    acp: AcpConfig = AcpConfig()

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
    prices: dict[str, dict[str, float]] = {}
    """Model -> USD per million tokens (`input`, `output`, `cache_read`, `cache_write`), over litellm's
    map: what the cost reports use (`core/cost.py`; a model with no price is unpriced, never 0)."""

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
    ui: Annotated[UIConfig, BeforeValidator(ui_config), PlainSerializer(msgspec.structs.asdict)] = UIConfig()
    """A msgspec Struct (`ui_settings`): `build_config` checks it before this model does."""
    batch: BatchConfig = BatchConfig()

    model_config = ConfigDict(extra="forbid", validate_assignment=True, arbitrary_types_allowed=True)


SECTIONS = tuple(SwedeckConfig.model_fields)
assert SECTIONS == SECTION_NAMES, "config_layers.SECTION_NAMES names the sections of SwedeckConfig"

def build_config(layers: Iterable[Layer]) -> SwedeckConfig:
    merged = merge_layers(layers)
    problems = ui_problems(merged)
    data = {key: value for key, value in merged.data.items() if key != "ui"} if problems else merged.data
    try:
        config = SwedeckConfig.model_validate(data)
    except ValidationError as exc:
        problems = _describe(exc, merged) + problems
    if problems:
        from .redact import Redactor, secret_values

        # An error shows what was given: never a secret's value (by name, by value, by shape)
        redactor = Redactor(secret_values(merged.data))
        raise ConfigError("\n".join(["invalid configuration:", *map(redactor.text, problems)]))
    return config


def load_config(
    specs: Iterable[str] = (),
    environ: Mapping[str, str] | None = None,
    flags: Mapping[str, Any] | None = None,
    user_config: bool = True,
) -> SwedeckConfig:
    return build_config(collect_layers(specs, environ, flags, user_config))


def _describe(exc: ValidationError, merged: _Merged) -> list[str]:
    from .redact import is_secret_name

    lines = []
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
        lines.append(f"  {source}: {where}: {problem}")
    return lines


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
    from .model_map import names_a_provider

    if not config.model.model_kwargs.get("custom_llm_provider") and not names_a_provider(name):
        raise UsageError(f"-m {name}: litellm cannot tell which provider serves {name!r}: give it as PROVIDER/MODEL "
                         f"(e.g. openai/{name}, anthropic/{name}, hosted_vllm/{name}), or set "
                         "model.model_kwargs.custom_llm_provider")
    return name


__all__ = ["MSWEA_VARIABLES", "SECTIONS", "AgentConfig", "BatchConfig", "CompactionConfig", "ConfigError",
           "EnvironmentConfig", "Layer", "ModelConfig", "RetryConfig", "RunConfig", "SwedeckConfig", "UIConfig",
           "build_config", "collect_layers", "dump_yaml", "file_layer", "load_config", "load_yaml", "parse_value",
           "require_model", "spec_layer"]
