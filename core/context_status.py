"""What the context-budget meter shows (SPEC §5), in a module of its own: the replay's meter
needs it before its first frame, and not the events of a live session (bench B2)."""

from __future__ import annotations

import msgspec


class ContextStatus(msgspec.Struct, frozen=True):
    """What the context-budget meter shows (SPEC §5)."""

    window: int | None
    prompt_tokens: int | None
    cached_tokens: int = 0
    next_estimate: int | None = None
    """Estimated prompt tokens of the next query after the active processors."""
    window_source: str = "unknown"
    estimated: bool = False
    """`prompt_tokens` is swedeck's own count: the provider reported no usage."""
    next_anchored: bool = False
    """`next_estimate` is the provider's last figure plus a local difference (else a local count)."""
    advice: str = ""
    """What would fit, after the provider refused a prompt as too long (the meter shows it)."""
    compact_at: int | None = None
    """The figure at which the next compaction fires: `summarize`'s `at` of the window, read
    against `next_estimate`, the very number the trigger reads (None: no automatic compaction)."""
    compactions: int = 0
    """Compactions in effect so far (an undone one does not count)."""

    @property
    def to_compaction(self) -> int | None:
        """Tokens left before the next compaction fires (0: it fires before the next query)."""
        if self.compact_at is None or self.next_estimate is None:
            return None
        return max(0, self.compact_at - self.next_estimate)

    @property
    def left_percent(self) -> float | None:
        if not self.window or self.prompt_tokens is None:
            return None
        if self.prompt_tokens >= self.window:  # also a count too large for a float (another tool's file)
            return 0.0
        return max(0.0, min(100.0, 100.0 * (1 - self.prompt_tokens / self.window)))
