"""The footer, keys whole or not at all (SPEC §10.1): Textual's footer cuts the key that reaches
its right edge in the middle of its word (`a Alwa` at 80 columns). This one shows the keys in
their order while each fits whole, and hides the rest (they stay in F1's help and the palette);
the bindings are ordered so the keys a person must find at 80 columns come first.

It is composed again only when the keys it shows change, and not while a widget that covers
it has the focus (`COVERS_FOOTER`: the go-to and search line): Textual's recomposes on every
change of focus or of any binding's state, even back to the same keys (a go-to recomposed it
six times, each a set of new widgets styled and laid out: issue 49, a key p99 <= 50 ms)."""

from __future__ import annotations

from typing import Any

from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey


def shown_keys(screen: Screen[Any]) -> tuple[Any, ...]:
    """What the footer shows of the screen's keys now: each shown binding, enabled or not."""
    return tuple((binding.key, binding.action, binding.description, enabled, tooltip)
                 for _, binding, enabled, tooltip in screen.active_bindings.values() if binding.show)


class FittedFooter(Footer):
    _shown: tuple[Any, ...] | None = None

    def bindings_changed(self, screen: Screen[Any]) -> None:
        if screen.app.app_focus and screen is self.screen:
            if getattr(screen.focused, "COVERS_FOOTER", False):
                return  # a line over it has the keys (`AskLine`): the footer's come back with the focus
            shown = shown_keys(screen)
            if shown == self._shown:
                return  # the same keys: nothing to compose
            self._shown = shown
        super().bindings_changed(screen)
    def on_mount(self) -> None:
        self.compact = self.size.width < self.COMPACT_BELOW
        self.call_after_refresh(self._fit)

    COMPACT_BELOW = 120
    """Columns under which the keys are drawn close together (Textual's compact footer): at 80
    the footer stopped after `e Edit`, without `a`, `m`, `p`, `t` (issue 62)."""

    def on_resize(self) -> None:
        self.compact = self.size.width < self.COMPACT_BELOW
        self._fit()

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Every key shown, then, once laid out, those from the first that does not fit whole on."""
        for key in self.query_children(FooterKey):
            key.display = True
        self.call_after_refresh(self._hide_overflow)

    def _hide_overflow(self) -> None:
        keys = list(self.query_children(FooterKey))
        palette = sum(key.outer_size.width for key in keys if key.has_class("-command-palette"))
        room, used, fits = self.size.width - palette, 0, True
        for key in keys:
            if key.has_class("-command-palette"):
                continue
            fits = fits and used + key.outer_size.width <= room
            used += key.outer_size.width
            key.display = fits
        self.call_after_refresh(self._hide_cut)

    def _hide_cut(self) -> None:
        """Once laid out where they are drawn (a compact footer's keys are measured before its
        spacing changes), a key that runs into the palette's corner is hidden, and those after it."""
        keys = list(self.query_children(FooterKey))
        corner = next((key.region.x for key in keys if key.has_class("-command-palette") and key.region.width),
                      self.region.right)
        cut = False
        for key in keys:
            if key.has_class("-command-palette") or not key.display:
                continue
            cut = cut or key.region.right > corner
            if cut:
                key.display = False
