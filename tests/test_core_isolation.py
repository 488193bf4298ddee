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


def core_import_graph() -> dict[str, set[str]]:
    """Every import between core modules, read from the source (function-level and
    TYPE_CHECKING imports included: a cycle through them is still a tangle)."""
    import ast
    from pathlib import Path

    root = Path(swedeck.core.__path__[0])
    modules = {".".join(("core", *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): path
               for path in root.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("swedeck.core"):
                target = node.module.replace("swedeck.", "", 1)
            else:
                continue
            # `from . import chat` imports the module chat; `from .x import name` imports x
            submodules = {f"{target}.{alias.name}" for alias in node.names} & set(modules)
            found = submodules or ({target} if target in modules else set())
            graph[name] |= found - {name}
    return graph


def test_the_core_has_no_import_cycle():
    """Issue 32.4: the agent's collaborators take the narrow protocols of `agent/seams.py`, not
    the Agent; the config names the agent classes itself; `actions_of` lives with the parsers."""
    graph = core_import_graph()
    assert len(graph) > 80 and "core.agent.agent" in graph["core.agent"]
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert cycles == []
