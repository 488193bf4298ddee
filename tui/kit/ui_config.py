"""How every swedeck app (live, replay, watch) takes the person's `ui` config: the shipped
and the person's themes, the theme shown, and the keymap (binding id -> keys). One place,
so `ui.keymap` and `ui.theme` mean the same in all three."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App

from swedeck.core.ui_settings import UIConfig
from swedeck.themes import DEFAULT_THEME, SHIPPED_THEMES, load_user_themes


def apply_ui_config(app: App[Any], ui: UIConfig, *, theme: str | None = None,
                    themes_dir: Path | None = None) -> list[str]:
    """Register the themes, show `theme` (else `ui.theme`), apply `ui.keymap`. Returns what
    the person should be told (a theme file that does not load, an unknown theme name)."""
    notes: list[str] = []
    for shipped in SHIPPED_THEMES.values():
        app.register_theme(shipped)
    loaded = load_user_themes(themes_dir)
    for user_theme in loaded.themes:
        app.register_theme(user_theme)
    notes += loaded.errors
    wanted = theme or ui.theme or DEFAULT_THEME
    if wanted in app.available_themes:
        app.theme = wanted
    else:
        app.theme = DEFAULT_THEME
        notes.append(f"unknown theme {wanted!r}; using {DEFAULT_THEME}")
    app.set_keymap(dict(ui.keymap))
    return notes


def tell_ui_notes(app: App[Any], notes: list[str]) -> None:
    """Show what `apply_ui_config` returned (call it once the app runs, from `on_mount`)."""
    for note in notes:
        app.notify(note, title="Theme", severity="warning", timeout=15, markup=False)
