"""`swedeck watch DIR [--stale-after S]`: a live table of the trajectories under DIR (SPEC §11.4)."""

from __future__ import annotations

import argparse
from pathlib import Path

from swedeck.core.errors import UsageError


def run(args: argparse.Namespace) -> int:
    from swedeck.core.config import load_config
    from swedeck.core.watch import DirectoryWatcher
    from swedeck.tui.watch.app import WatchApp

    folder = Path(args.dir)
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder")
    from swedeck.core.cost import Prices

    config = load_config(args.config)  # ui.keymap and ui.theme here; the model for `f` (fork); model.prices
    watcher = DirectoryWatcher(folder, stale_after_s=args.stale_after, prices=Prices(config.model.prices))
    app = WatchApp(watcher, ui=config.ui, theme=args.theme, rules=list(config.agent.rules))
    request = app.run()
    if app.return_code:
        from swedeck.tui.live.launch import ui_ended

        return ui_ended(app)
    if request is None:
        return 0
    from .replay_ui import fork

    return fork(request, config, replay=False)  # `f` in a followed replay forks it
