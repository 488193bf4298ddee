"""The themes swedeck ships (SPEC §10.4): a dark default, a light one, a high-contrast one.

Widgets colour themselves only with Textual's semantic names ($success, $warning, $error,
$accent, $text-muted, ...), so any theme, shipped, built-in or the user's, colours all of
swedeck.
"""

from __future__ import annotations

from textual.theme import Theme

DEFAULT_THEME = "swedeck-dark"

SWEDECK_DARK = Theme(
    name="swedeck-dark",
    primary="#5FA8D3",
    secondary="#8FB996",
    accent="#F0A35E",
    warning="#E9C46A",
    error="#E76F51",
    success="#7BC47F",
    foreground="#D8DEE9",
    background="#161B22",
    surface="#1E252E",
    panel="#2A3340",
    dark=True,
)

SWEDECK_LIGHT = Theme(
    name="swedeck-light",
    primary="#1F6FB2",
    secondary="#3C7A4A",
    accent="#B85C00",
    warning="#9A6700",
    error="#C0392B",
    success="#2E7D32",
    foreground="#1B1F24",
    background="#F7F7F5",
    surface="#ECEDEA",
    panel="#DCDFE3",
    dark=False,
)

SWEDECK_HIGH_CONTRAST = Theme(
    name="swedeck-high-contrast",
    primary="#FFFF00",
    secondary="#00FFFF",
    accent="#FF00FF",
    warning="#FFFF00",
    error="#FF5555",
    success="#00FF00",
    foreground="#FFFFFF",
    background="#000000",
    surface="#000000",
    panel="#1A1A1A",
    dark=True,
    variables={"border": "#FFFFFF", "text-muted": "#D0D0D0"},
)

SHIPPED_THEMES: dict[str, Theme] = {
    theme.name: theme for theme in (SWEDECK_DARK, SWEDECK_LIGHT, SWEDECK_HIGH_CONTRAST)
}
