"""Errors the user can act on. The CLI prints their message (no traceback) and exits with `exit_code`."""

from __future__ import annotations


class SwedeckError(Exception):
    exit_code = 1


class UsageError(SwedeckError):
    """Bad arguments or configuration: exit 2."""

    exit_code = 2
