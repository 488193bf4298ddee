"""The screen kit: the one way a swedeck view is built (an app base, a view screen, the palette and help from bindings, worker errors)."""
