"""SPEC §1: the core never imports Textual or the TUI (and config never imports litellm, §4.6)."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import swedeck.core


def imported_after(code: str) -> set[str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.strip().splitlines()[-1]))


def test_core_modules_never_import_textual_or_tui():
    names = [m.name for m in pkgutil.walk_packages(swedeck.core.__path__, "swedeck.core.")]
    assert len(names) >= 5
    modules = imported_after("\n".join(f"import {name}" for name in names))
    assert not {m for m in modules if m == "textual" or m.startswith(("textual.", "swedeck.tui"))}


def test_config_show_path_does_not_import_litellm_or_textual():
    modules = imported_after(
        "from swedeck.commands import config\nfrom swedeck.core.config import load_config, dump_yaml\n"
        "dump_yaml(load_config([]))"
    )
    assert "litellm" not in modules
    assert "textual" not in modules
