"""The environment contract (SPEC §8), after SWE-agent's SWEEnv.

`local.LocalEnvironment` and `docker.DockerEnvironment` implement it with the same
session semantics: one persistent bash session; `cd`, `export`, variables and functions
carry over; a timeout or interrupt stops only that command's process tree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ..errors import SwedeckError


@dataclass(frozen=True)
class ExecutionResult:
    """What a command did: the one record the agent, the `CommandFinished` event, the
    observation message and the UI's output pane all read."""

    output: str
    """Decoded (UTF-8, replacement), `\\r` progress collapsed, escapes stripped, head+tail truncated."""
    returncode: int | None
    """None when the command was stopped (timeout or interrupt)."""
    duration_s: float
    timed_out: bool = False
    interrupted: bool = False
    truncated: bool = False
    output_chars: int = 0
    """Length of the full output before truncation."""
    secrets_masked: int = 0
    """How many of the person's secret values (and, with `mask_secret_shapes`, token shapes)
    `output` has as `***`: a submission that had any is not what the command printed."""

    def template_vars(self) -> dict[str, Any]:
        """The observation template's variables (mini-swe-agent's names)."""
        return {"output": self.output, "returncode": self.returncode, "timed_out": self.timed_out,
                "interrupted": self.interrupted, "output_truncated": self.truncated, "duration_s": self.duration_s}

    def message_extra(self) -> dict[str, Any]:
        """The observation message's `extra` fields (the trajectory format's names)."""
        return {"returncode": self.returncode, "duration_s": round(self.duration_s, 4), "timed_out": self.timed_out,
                "output_truncated": self.truncated, "raw_output": self.output}

    @property
    def stopped(self) -> str:
        """Why the command did not end by itself: `timed out`, `interrupted`, or ""."""
        return "timed out" if self.timed_out else "interrupted" if self.interrupted else ""

    def status(self) -> str:
        """`exit 0 · 0.12 s`, `exit ? · 30.00 s · timed out`: one line for a person."""
        parts = [f"exit {self.returncode if self.returncode is not None else '?'}", f"{self.duration_s:.2f} s"]
        if self.stopped:
            parts.append(self.stopped)
        if self.truncated:
            parts.append("output truncated: the model got its head and tail")
        return " · ".join(parts)


OutputCallback = Callable[[str], None]
"""Receives decoded chunks of output while a command runs (for the UI)."""


class EnvironmentHook:
    """Called around an environment's life. Subclass and override any of these; an object
    that has only some of the methods works too (the environment calls what exists)."""

    def on_init(self, env: Environment) -> None: ...
    def on_start(self, env: Environment) -> None: ...
    def on_environment_startup(self, env: Environment) -> None: ...
    def on_command_start(self, env: Environment, command: str) -> None: ...
    def on_command_done(self, env: Environment, command: str, result: ExecutionResult) -> None: ...
    def on_close(self, env: Environment) -> None: ...


class CommandFailed(SwedeckError):
    """`communicate(check="raise")` saw a non-zero exit."""


class Environment(Protocol):
    description: str
    """For the UI header: `local (host) /path` or `docker swedeck-test:latest`."""

    def start(self) -> None: ...
    def execute(self, command: str, timeout: float | None = None, on_output: OutputCallback | None = None) -> ExecutionResult: ...
    def communicate(self, input: str, timeout: float | None = None,
                    check: Literal["ignore", "warn", "raise"] = "ignore", error_msg: str = "Command failed") -> str: ...
    def interrupt_session(self) -> None: ...
    def reset(self) -> None: ...
    def read_file(self, path: str) -> str: ...
    def write_file(self, path: str, text: str) -> None: ...
    def set_env_variables(self, variables: dict[str, str]) -> None: ...
    def add_hook(self, hook: EnvironmentHook) -> None: ...
    def get_template_vars(self) -> dict[str, object]: ...
    def close(self) -> None: ...
