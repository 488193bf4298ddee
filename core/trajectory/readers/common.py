"""Pieces the readers share: the `info` record of the JSON formats."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...messages import ModelStats
from ..coerce import as_number, mapping, optional_str
from ..model import TrajectoryInfo

# SWE-agent says tokens_sent/tokens_received where the others say prompt/completion tokens.
_STAT_NAMES = {
    "instance_cost": ("instance_cost", "cost"),
    "api_calls": ("api_calls",),
    "prompt_tokens": ("prompt_tokens", "tokens_sent"),
    "completion_tokens": ("completion_tokens", "tokens_received"),
}


def info_from(raw: Mapping[str, Any]) -> TrajectoryInfo:
    stats = mapping(raw.get("model_stats"))
    config = raw.get("config")
    info = TrajectoryInfo(
        exit_status=optional_str(raw.get("exit_status")),
        submission=optional_str(raw.get("submission")),
        model_stats=model_stats(stats),
        config=dict(mapping(config)),
        swedeck_version=optional_str(raw.get("swedeck_version")),
        raw=dict(raw),
    )
    info.model_name = model_name(info.config)
    return info


def model_stats(stats: Mapping[str, Any]) -> ModelStats:
    values: dict[str, Any] = {}
    for name, keys in _STAT_NAMES.items():
        for key in keys:
            number = as_number(stats.get(key))
            if number is not None:
                values[name] = number if name == "instance_cost" else int(number)
                break
    return ModelStats(**values)


def model_name(config: Mapping[str, Any]) -> str | None:
    """The model name in a swedeck, mini-swe-agent or SWE-agent config."""
    model = config.get("model")
    if isinstance(model, Mapping):
        name = model.get("model_name") or model.get("name")
        return str(name) if name else None
    agent = config.get("agent")
    if isinstance(agent, Mapping) and isinstance(agent.get("model"), Mapping):
        name = agent["model"].get("name") or agent["model"].get("model_name")
        return str(name) if name else None
    return None


def info_of(document: Mapping[str, Any]) -> tuple[Mapping[str, Any], TrajectoryInfo]:
    """A document's `info` object (which must be one, if present) and what it says."""
    raw_info = document.get("info") or {}
    if not isinstance(raw_info, Mapping):
        raise ValueError(f"`info` is {type(raw_info).__name__}, not an object")
    return raw_info, info_from(raw_info)
