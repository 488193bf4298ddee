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
    if window.window is None:  # say how to give it, rather than leave the meter without a scale
        print(f"hint: swedeck knows no window for {args.model}: set it with -c model.context_window=TOKENS "
              "(or model.context_window in the config)")
    return 0
