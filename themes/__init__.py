"""Shipped themes and the user-theme loader (SPEC §10.4)."""

from .shipped import DEFAULT_THEME, SHIPPED_THEMES
from .user_themes import LoadedThemes, load_user_themes, user_themes_dir

__all__ = ["DEFAULT_THEME", "SHIPPED_THEMES", "LoadedThemes", "load_user_themes",
           "user_themes_dir"]
