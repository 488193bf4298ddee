"""Each test's own user config, data and cache folders (conftest's autouse fixture), and the
same for a run recorded once and shared by the tests of a module (`recorded_once`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

INHERITED = ("SWEDECK_AGENT__", "SWEDECK_MODEL__", "SWEDECK_ENVIRONMENT__", "SWEDECK_RUN__", "SWEDECK_UI__", "MSWEA_")
"""Variables of the person's shell that would change a run's config: never seen by a test."""


def isolate_user_dirs(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    monkeypatch.setenv("SWEDECK_CONFIG_DIR", str(home / "config"))
    monkeypatch.setenv("SWEDECK_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("SWEDECK_CACHE_DIR", str(home / "cache"))
    for name in list(os.environ):
        if name.startswith(INHERITED):
            monkeypatch.delenv(name)
    return home


@contextmanager
def recorded_once(tmp_path_factory: pytest.TempPathFactory, name: str) -> Iterator[Path]:
    """A folder for a real run that several tests only read (a module- or session-scoped
    fixture): the run sees user folders of its own, as a test's would be."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        isolate_user_dirs(monkeypatch, tmp_path_factory.mktemp(f"{name}-user"))
        yield tmp_path_factory.mktemp(name)
