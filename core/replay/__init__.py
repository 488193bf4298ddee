"""Replay and step-by-step debugging without the drawing (SPEC §11): lazy documents over
trajectory files, search, the token curve, what-if processors and forking a session."""

from __future__ import annotations

from .document import LiveDocument, LoadedDocument, ReplayDocument, StepView, open_document

__all__ = ["LiveDocument", "LoadedDocument", "ReplayDocument", "StepView", "open_document"]
