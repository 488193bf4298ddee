"""One user theme file (SPEC §10.4): validated by a pydantic model first, so a typo gives one
clear message naming the file and the field. Imported only when the themes folder holds a
file: a start without user themes builds no model for them."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from textual.color import Color, ColorParseError
from textual.theme import Theme

from swedeck.core.config_layers import load_yaml


class ThemeFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    primary: str
    secondary: str | None = None
    accent: str | None = None
    warning: str | None = None
    error: str | None = None
    success: str | None = None
    foreground: str | None = None
    background: str | None = None
    surface: str | None = None
    panel: str | None = None
    boost: str | None = None
    dark: bool = True
    variables: dict[str, str] = {}

    @field_validator("primary", "secondary", "accent", "warning", "error", "success", "foreground",
                     "background", "surface", "panel", "boost")
    @classmethod
    def _colour(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                Color.parse(value)
            except ColorParseError:
                raise ValueError(f"not a colour: {value!r}") from None
        return value

    def to_theme(self) -> Theme:
        return Theme(**self.model_dump())


def load_theme_file(path: Path) -> Theme:
    """One theme file; raises ValueError with a message naming the file."""
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read theme: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a theme file must be a mapping (name, primary, background, ...)")
    try:
        return ThemeFile.model_validate(data).to_theme()
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'theme'}: {e['msg']}" for e in exc.errors())
        raise ValueError(f"{path}: invalid theme: {problems}") from None
