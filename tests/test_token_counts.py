"""Local token counts (`core/tokens.py`) from any thread: the replay's workers count while the
UI's thread does."""

from __future__ import annotations

import threading

import tiktoken

from swedeck.core import tokens


def test_a_count_while_the_encoder_loads_in_another_thread_is_not_an_estimate(monkeypatch):
    """Nothing is published before the encoder is loaded: a thread that counted meanwhile got
    the characters' estimate (and kept it in the cache)."""
    tokens._load_encoder()
    encoding = tokens._encoder
    assert encoding, "tiktoken's cl100k_base, from the copy litellm bundles"
    gate, started = threading.Event(), threading.Event()

    def slow(name: str) -> object:
        started.set()
        gate.wait(10)
        return encoding

    monkeypatch.setattr(tiktoken, "get_encoding", slow)
    monkeypatch.setattr(tokens, "_encoder", None)
    counted: list[int] = []
    loader = threading.Thread(target=lambda: counted.append(tokens.count_text("loading")))
    loader.start()
    assert started.wait(10)
    assert tokens._encoder is None  # a load under way: another thread's count waits for it
    other = threading.Thread(target=lambda: counted.append(tokens.count_text("Please solve this issue: average")))
    other.start()
    gate.set()
    loader.join(10)
    other.join(10)
    assert sorted(counted) == sorted([len(encoding.encode_ordinary("loading")),
                                      len(encoding.encode_ordinary("Please solve this issue: average"))])
