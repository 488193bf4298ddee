"""User themes: YAML files in `<user config dir>/themes/*.yaml` -> `textual.theme.Theme`.

Each file is read by `theme_file.load_theme_file`; an invalid file is reported and skipped,
never fatal.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
from textual.theme import Theme

from swedeck.core import paths


class LoadedThemes(msgspec.Struct):
    """The person's own themes that loaded, and why the others did not."""

    themes: list[Theme] = msgspec.field(default_factory=list)
    errors: list[str] = msgspec.field(default_factory=list)
    """One line per skipped file: the file and what is wrong with it."""


def user_themes_dir() -> Path:
    return paths.user_config_dir() / "themes"


def load_user_themes(folder: Path | None = None) -> LoadedThemes:
    folder = folder or user_themes_dir()
    loaded = LoadedThemes()
    if not folder.is_dir():
        return loaded
    files = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")])
    if not files:
        return loaded
    from .theme_file import load_theme_file

    for path in files:
        try:
            loaded.themes.append(load_theme_file(path))
        except ValueError as exc:
            loaded.errors.append(str(exc))
    return loaded
