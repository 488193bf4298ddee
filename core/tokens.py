"""Local token counts: usage estimates, the next-prompt prediction, the prompt inspector.

Uses tiktoken's `cl100k_base` from the copy litellm bundles, so counting needs neither
the network nor `import litellm` (which takes seconds). Counts are estimates for models
with other tokenizers; the UI marks them as such. Without tiktoken, ~4 characters a token.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .messages import Message

MESSAGE_OVERHEAD = 4
"""Tokens a chat message costs beyond its text (role and separators), as OpenAI counts them."""

_encoder: Any = None
_encoder_lock = threading.Lock()
_cache: OrderedDict[int, tuple[Message, int]] = OrderedDict()
_CACHE_SIZE = 50_000


def _load_encoder() -> Any:
    """The encoder, loaded once. Another thread that counts meanwhile waits for it: `_encoder`
    is set when the load is done (a worker's counts were estimates from the characters, and
    kept in the cache, while the UI's thread loaded it)."""
    global _encoder
    with _encoder_lock:
        if _encoder is None:
            spec = importlib.util.find_spec("litellm")
            if spec and spec.submodule_search_locations and "TIKTOKEN_CACHE_DIR" not in os.environ:
                bundled = os.path.join(spec.submodule_search_locations[0], "litellm_core_utils", "tokenizers")
                if os.path.isdir(bundled):
                    os.environ["TIKTOKEN_CACHE_DIR"] = bundled
            try:
                import tiktoken

                loaded: Any = tiktoken.get_encoding("cl100k_base")
            except Exception:  # noqa: BLE001 - no tiktoken or no cached encoding: fall back to characters
                loaded = False
            _encoder = loaded
    return _encoder


CHUNK_CHARS = 1_000_000
"""A longer text is counted a slice at a time: tiktoken's token list for a 200 MB message
would take gigabytes; the slices' counts take a few megabytes."""


def count_text(text: str) -> int:
    if not text:
        return 0
    encoder = _encoder if _encoder is not None else _load_encoder()
    if encoder is False:
        return max(1, len(text) // 4)
    if len(text) <= CHUNK_CHARS:
        return len(encoder.encode_ordinary(text))
    return sum(len(encoder.encode_ordinary(piece)) for piece in _slices(text))


def _slices(text: str) -> Any:
    """`text` in slices of about `CHUNK_CHARS`, each cut after a whitespace where there is one
    near its end (so no word is split and the sum stays the count of the whole)."""
    start = 0
    while start < len(text):
        end = min(start + CHUNK_CHARS, len(text))
        if end < len(text):
            cut = max(text.rfind(" ", end - 4096, end), text.rfind("\n", end - 4096, end))
            end = cut + 1 if cut > start else end
        yield text[start:end]
        start = end


def count_message(message: Message) -> int:
    """Tokens of one message as sent (text, tool calls, overhead). Cached per message object."""
    key = id(message)
    hit = _cache.get(key)
    if hit is not None and hit[0] is message:
        return hit[1]
    total = MESSAGE_OVERHEAD + count_text(message.text)
    for call in message.tool_calls or ():
        total += count_text(call.function.name) + count_text(call.function.arguments) + 3
    _cache[key] = (message, total)
    if len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return total


def count_messages(messages: list[Message]) -> int:
    return sum(count_message(message) for message in messages) + 3


def count_tools(tools: list[Any]) -> int:
    """The tokens of a request's tool definitions, as their JSON (`prompt --json`'s `tools_tokens`)."""
    import json

    return count_text(json.dumps(tools)) if tools else 0
