"""SPEC §1: configs and themes are found from an installed wheel, run from another folder."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import yaml

from conftest import REPO


def test_wheel_installs_and_finds_its_configs(tmp_path: Path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(REPO)],
        check=True, capture_output=True, timeout=300,
    )
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    target = tmp_path / "site"
    wheel = next(wheels.glob("swedeck-*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True, capture_output=True, timeout=300,
    )
    # The fresh interpreter sees only the installed wheel plus the dependencies (not the checkout).
    dependencies = sysconfig.get_paths()["purelib"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sys; from swedeck.cli import main; sys.exit(main(sys.argv[1:]))",
         "config", "show", "-c", "swebench"],
        cwd=elsewhere, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": f"{target}:{dependencies}", "SWEDECK_CONFIG_DIR": str(tmp_path / "cfg"), "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr
    shown = yaml.safe_load(result.stdout)
    assert shown["environment"]["environment_class"] == "docker"
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in shown["agent"]["system_template"]
    import_check = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import swedeck.core.config as c; print(c.__file__)"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, env={"PYTHONPATH": f"{target}:{dependencies}"},
    )
    assert import_check.stdout.startswith(str(target)), import_check.stdout + import_check.stderr


def test_ci_runs_the_readmes_test_command_and_installs_what_the_readme_names():
    """The README's test command is the whole story (issue 43.16): `.ci/run` runs exactly that
    line, and every system package `.ci/run` installs is named in the README."""
    import re

    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    command = next(line for line in readme.splitlines() if "python -m pytest tests" in line and "pip install" in line)
    assert command in ci.splitlines()
    assert "harbor==0.25.0" in command
    packages = set(re.findall(r"need\+=\(([\w.-]+)\)", ci))
    assert packages >= {"docker.io", "busybox-static", "bash-static", "tmux", "chromium", "debootstrap"}
    for package in packages:
        assert f"`{package}`" in readme, package


def test_ci_installs_the_agents_the_tests_pin_newest_and_previous():
    """The version matrix (issue 63): `.ci/run` installs exactly the pins `support.agent_clis`
    names, the newest and the previous, each set into its own folder."""
    import re

    from support.agent_clis import PREVIOUS, VERSIONS

    script = (Path(__file__).parent.parent / ".ci" / "run").read_text()
    installs = re.findall(r"npm install --prefix \"\$(\w+)\"[^\n]*\\\n((?:\s+[^\n]*\\\n)*\s+[^\n]*)", script)
    packages = {folder: set(re.findall(r"@[\w-]+/[\w-]+@[\w.]+", body)) for folder, body in installs}
    assert packages == {"agents": set(VERSIONS.values()), "previous": set(PREVIOUS.values())}, packages
