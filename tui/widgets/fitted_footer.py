"""The footer, keys whole or not at all (SPEC §10.1): Textual's footer cuts the key that reaches
its right edge in the middle of its word (`a Alwa` at 80 columns). This one shows the keys in
their order while each fits whole, and hides the rest (they stay in F1's help and the palette);
the bindings are ordered so the keys a person must find at 80 columns come first."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey


class FittedFooter(Footer):
    def on_mount(self) -> None:
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
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
