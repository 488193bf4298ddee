"""Fixtures for a large file read a part first (loaded as a plugin by tests/conftest.py):
`mapped` makes every file read as a large one is, `held` holds its whole reading until the
test lets it go."""

from __future__ import annotations

import threading
from typing import Any

import pytest


@pytest.fixture
def mapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file mapped, as a large one is (`MAP_BYTES`), and read a part first (`PART_FROM_BYTES`)."""
    from swedeck.core.trajectory import loader

    monkeypatch.setattr(loader, "MAP_BYTES", 1)
    monkeypatch.setattr(loader, "PART_FROM_BYTES", 1)


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch, mapped: None) -> threading.Event:
    """The whole reading waits until the test lets it go (`set`), so what is shown meanwhile is
    seen; it is the real reading once let go. A part is 32 KB of the file."""
    from swedeck.core.replay.document import ReadingDocument
    from swedeck.core.trajectory.readers import source as sources

    gate = threading.Event()
    real = ReadingDocument.finish

    def finish(self: ReadingDocument) -> Any:
        gate.wait(30)
        return real(self)

    monkeypatch.setattr(ReadingDocument, "finish", finish)
    monkeypatch.setattr(sources, "PART_BYTES", 32768)
    return gate
