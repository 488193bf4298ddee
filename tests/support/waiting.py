"""Waiting on conditions, never on time: the one pair of helpers every test uses.

`wait_until` polls a predicate from a test's own thread (files, processes, a tmux pane);
`wait_for` lets a running Textual app work between polls (Pilot tests). Both fail with the
predicate's name after `timeout` seconds, so a loaded machine only makes a test slower.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def wait_until(predicate: Callable[[], T], timeout: float = 30, what: str | None = None) -> T:
    """Poll `predicate()` until it is truthy and return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or getattr(predicate, '__name__', predicate)}")
        time.sleep(0.02)


async def wait_for(pilot: Any, predicate: Callable[[], T], timeout: float = 5.0) -> T:
    """Let the app run until `predicate()` is truthy (events from the worker take a moment)."""
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > end:
            raise AssertionError(f"timed out waiting for {getattr(predicate, '__name__', predicate)}")
        await pilot.pause(0.02)


def running_below(pid: int, argv: list[str]) -> bool:
    """Whether a descendant of process `pid` runs `argv` (read from /proc): "the command has
    started" for tests that interrupt it."""
    parents: dict[int, int] = {}
    commands: dict[int, bytes] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            commands[int(entry.name)] = (entry / "cmdline").read_bytes()
        except OSError:  # it ended while we looked
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    wanted = "\0".join(argv).encode() + b"\0"
    for child, command in commands.items():
        if command != wanted:
            continue
        ancestor = parents.get(child)
        while ancestor and ancestor != pid:
            ancestor = parents.get(ancestor)
        if ancestor == pid:
            return True
    return False


def exited(pid: int) -> bool:
    """Whether process `pid` has ended: no longer in /proc, or a zombie its parent has yet to reap."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"
