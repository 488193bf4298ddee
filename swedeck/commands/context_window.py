"""`swedeck context-window MODEL [-c ...]`: the window swedeck assumes, and where it comes from."""

from __future__ import annotations

import argparse

from swedeck.core.config import load_config
from swedeck.core.context_window import resolve_context_window


def run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    # Asked for on purpose: litellm's model info may be consulted (the UI start path never does).
    window = resolve_context_window(args.model, override=config.model.context_window, use_litellm=True)
    print("\n".join(window.lines()))
    return 0
