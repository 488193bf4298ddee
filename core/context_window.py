"""Context-window sizes and the context budget (SPEC §5).

Window size, in order: `model.context_window`; the context-window map (the user's copy
of `configs/model_context_windows.yaml`); litellm's model info, only when the caller
opts in (it imports litellm, which the UI start path must not); else unknown.

Map lookup uses a normalized name, exactly, else the longest key that is a prefix ending
at a boundary; a prefix hit is saved to the user map so the next lookup is exact.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

import msgspec

from . import paths
from .config_layers import load_yaml_file, yaml_error

MAP_FILE = "model_context_windows.yaml"
Source = Literal["config", "map", "litellm", "unknown"] | str
"""Also `map (prefix: KEY)` for a prefix hit."""

# Bedrock and Vertex style vendor prefixes inside the last path segment.
_VENDOR_PREFIX = re.compile(r"^(?:(?:us|eu|apac|global)\.)?(?:anthropic|meta|mistral|amazon|cohere|ai21|deepseek|qwen)\.")
_SUFFIXES = [
    re.compile(r"-\d{4}-\d{2}-\d{2}$"),  # -2024-08-06
    re.compile(r"-\d{8}$"),  # -20241022
    re.compile(r"-\d{4}$"),  # -0613, -2407, -2507
    re.compile(r"[-@](?:preview|beta|latest|exp|experimental)$"),
    re.compile(r"[:@]latest$"),
    re.compile(r"-v\d+(?::\d+)?$"),  # bedrock -v1:0
    re.compile(r"-(?:fp8|fp16|bf16|int4|int8|awq|gptq|gguf|mlx|4bit|8bit|w4a16|w8a8|dynamic)$"),
    re.compile(r"-q\d(?:_[0-9a-z]+)*$"),  # -q4_k_m, -q8_0
]


class ContextWindow(msgspec.Struct, frozen=True):
    """A model's context window, the name it was looked up by, and where the figure came from."""

    window: int | None
    normalized: str
    source: Source

    def lines(self) -> list[str]:
        window = f"{self.window}" if self.window else "unknown"
        return [f"normalized: {self.normalized}", f"window: {window}", f"source: {self.source}"]


def normalize_model_name(name: str) -> str:
    """`hosted_vllm/Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8` -> `qwen3-coder-30b-a3b-instruct`."""
    name = name.strip().lower().rsplit("/", 1)[-1]
    name = _VENDOR_PREFIX.sub("", name)
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            stripped = suffix.sub("", name)
            if stripped != name and stripped:
                name, changed = stripped, True
    return name


def _at_boundary(name: str, key: str) -> bool:
    """`key` is a prefix of `name` ending where a model name part ends.

    `.` counts only when no digit follows: `gpt-4` must not answer for `gpt-4.5`.
    """
    if not name.startswith(key):
        return False
    rest = name[len(key) :]
    if not rest:
        return True
    if rest[0] in "-:":
        return True
    return rest[0] == "." and not (len(rest) > 1 and rest[1].isdigit())


def lookup(name: str, windows: dict[str, int]) -> tuple[int, str] | None:
    """(window, key) for a normalized name: exact, else the longest boundary prefix."""
    if name in windows:
        return windows[name], name
    keys = [key for key in windows if _at_boundary(name, key)]
    if not keys:
        return None
    key = max(keys, key=len)
    return windows[key], key


# --- the map ------------------------------------------------------------------------------


def shipped_map_path() -> Path:
    return paths.shipped_configs_dir() / MAP_FILE


def user_map_path() -> Path:
    return paths.user_config_dir() / MAP_FILE


def ensure_user_map() -> Path:
    """The user's map, copied from the shipped seed on first use."""
    path = user_map_path()
    if not path.is_file():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(shipped_map_path().read_text(encoding="utf-8"), encoding="utf-8")
        except OSError:
            return shipped_map_path()  # a read-only config dir still gets the seed
    return path


def load_map(path: Path | None = None) -> dict[str, int]:
    path = path or ensure_user_map()
    try:
        data = load_yaml_file(path) or {}
    except (OSError, UnicodeDecodeError, yaml_error()):
        data = {}
    if not isinstance(data, dict):
        return {}
    return {str(key).lower(): int(value) for key, value in data.items() if isinstance(value, int) and value > 0}


def save_entry(name: str, window: int, path: Path | None = None) -> None:
    """Append `name: window` to the user map (appending keeps the user's comments)."""
    path = path or ensure_user_map()
    if path == shipped_map_path():
        return
    try:
        import yaml

        with path.open("a", encoding="utf-8") as handle:
            handle.write(yaml.safe_dump({name: window}, default_flow_style=False))
    except OSError:
        pass  # a cache, not a requirement


# --- resolution ---------------------------------------------------------------------------


def litellm_window(model_name: str) -> int | None:
    """`max_input_tokens` from litellm's model info. Imports litellm: never on the UI start path."""
    from .models.litellm_loader import litellm

    try:
        info = litellm().get_model_info(model_name)
    except Exception:  # noqa: BLE001 - unknown to litellm
        return None
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return int(value) if value else None


def resolve_context_window(model_name: str, override: int | None = None, *, use_litellm: bool = False) -> ContextWindow:
    normalized = normalize_model_name(model_name) if model_name else ""
    if override:
        return ContextWindow(override, normalized, "config")
    if not normalized or model_name.startswith("replay:"):
        return ContextWindow(None, normalized, "unknown")
    path = ensure_user_map()
    hit = lookup(normalized, load_map(path))
    if hit is not None:
        window, key = hit
        if key == normalized:
            return ContextWindow(window, normalized, "map")
        save_entry(normalized, window, path)
        return ContextWindow(window, normalized, f"map (prefix: {key})")
    if use_litellm:
        known = litellm_window(model_name)
        if known:
            return ContextWindow(known, normalized, "litellm")
    return ContextWindow(None, normalized, "unknown")

