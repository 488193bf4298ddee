"""swedeck's shipped themes for the replay and watch apps (Textual's own when unavailable)."""

from __future__ import annotations

from textual.app import App


def register_themes(app: App, wanted: str | None) -> None:
    try:
        from swedeck.themes import DEFAULT_THEME, SHIPPED_THEMES
    except ImportError:  # themes are optional for reading trajectories
        DEFAULT_THEME, SHIPPED_THEMES = "textual-dark", {}
    for shipped in SHIPPED_THEMES.values():
        app.register_theme(shipped)
    app.theme = wanted if wanted in app.available_themes else DEFAULT_THEME
