"""Usage and cost of one response (SPEC §4.3)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import SwedeckError
from ..messages import Message, Usage
from ..tokens import count_messages, count_text
from .assembler import _get
from .litellm_loader import litellm

FREE_PROVIDERS = ("hosted_vllm", "vllm", "ollama", "ollama_chat", "lm_studio", "llamafile")
"""Self-hosted providers: litellm has no price for them, and a price of 0 is the truth."""


class CostUnknown(SwedeckError):
    pass


def usage_from(raw: Any) -> Usage | None:
    """A provider usage record -> Usage, or None when absent or all zero."""
    if raw is None:
        return None
    prompt = int(_get(raw, "prompt_tokens") or 0)
    completion = int(_get(raw, "completion_tokens") or 0)
    cached = int(_get(_get(raw, "prompt_tokens_details"), "cached_tokens") or 0)
    # Anthropic reports cache reads separately.
    cached = cached or int(_get(raw, "cache_read_input_tokens") or 0)
    if not (prompt or completion):
        return None
    return Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached)


def estimate_usage(messages: list[Message], response_text: str) -> Usage:
    return Usage(prompt_tokens=count_messages(messages), completion_tokens=count_text(response_text), estimated=True)


def compute_cost(model_name: str, usage: Usage | None, cost_tracking: str,
                 prices: Mapping[str, Mapping[str, float]] | None = None) -> float:
    """Dollars for `usage`: at the config's `model.prices` for the model where it sets them (as
    the cost reports price it, `core/cost.py`), else litellm's. Unknown prices: 0 for
    self-hosted providers and with `ignore_errors`; otherwise a `CostUnknown` saying how to go on."""
    if usage is None:
        return 0.0
    if prices:
        from ..cost import Prices

        price = Prices(prices).of_config(model_name)
        if price is not None:
            return sum(price.dollars(usage).values())
    provider = model_name.split("/", 1)[0] if "/" in model_name else ""
    try:
        prompt_cost, completion_cost = litellm().cost_per_token(
            model=model_name,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cache_read_input_tokens=usage.cached_tokens or None,
        )
        cost = float(prompt_cost or 0) + float(completion_cost or 0)
    except Exception as exc:  # noqa: BLE001 - litellm raises assorted errors for unknown models
        if cost_tracking == "ignore_errors" or provider in FREE_PROVIDERS:
            return 0.0
        raise CostUnknown(
            f"no price known for model {model_name!r} ({type(exc).__name__}), so the cost limit cannot be "
            "enforced. If it is free or self-hosted, set model.cost_tracking=ignore_errors "
            "(e.g. -c model.cost_tracking=ignore_errors)."
        ) from None
    if cost <= 0 and usage.prompt_tokens and cost_tracking != "ignore_errors" and provider not in FREE_PROVIDERS:
        # litellm answers 0 for some unknown models instead of raising; treat it the same way.
        info_known = _has_price(model_name)
        if not info_known:
            raise CostUnknown(
                f"no price known for model {model_name!r}, so the cost limit cannot be enforced. If it is free or "
                "self-hosted, set model.cost_tracking=ignore_errors (e.g. -c model.cost_tracking=ignore_errors)."
            )
    return cost


def _has_price(model_name: str) -> bool:
    try:
        info = litellm().get_model_info(model_name)
    except Exception:  # noqa: BLE001 - unknown to litellm: no price
        return False
    return bool(info.get("input_cost_per_token") or info.get("output_cost_per_token"))
