"""Grading a batch instance (SPEC §15 verdicts): a shell command run in the instance's own
environment right after its agent ends, before the container is removed (Harbor's way):
exit 0 is resolved, any other exit unresolved, and a verifier that cannot run, crashes the
environment or runs past its time is an infra failure, never the agent's. Its output is
kept beside the trajectory (`<id>/verify.log`).

Every instance ends in exactly one class (`CLASSES`), from how its session ended and what
the verifier said.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from ..environments.base import Environment
from ..exit_status import ExitStatus
from .folder_files import write_text

VerdictClass = Literal["resolved", "unresolved", "empty_patch", "agent_error", "infra_failure", "not_run",
                       "not_verified"]
CLASSES: tuple[VerdictClass, ...] = ("resolved", "unresolved", "empty_patch", "agent_error", "infra_failure",
                                     "not_run", "not_verified")
"""`not_verified`: submitted with a patch, and no verifier was named or `--no-verify` was given."""
LOG = "verify.log"


@dataclass(frozen=True)
class Verification:
    resolved: bool | None
    """None: the verifier could not give an answer (an infra failure)."""
    returncode: int | None
    duration_s: float
    problem: str | None = None
    """Why there is no answer: it timed out, the environment failed, it could not start."""

    def record(self) -> dict[str, Any]:
        """What `batch.json` keeps of it (`InstanceState.verify`)."""
        return {"returncode": self.returncode, "duration_s": round(self.duration_s, 3), "problem": self.problem}


class Verifier(Protocol):
    """What grades an instance: called with its environment and its submission when its agent
    has submitted (`Session.after_agent`); `result` is None when it did not run."""

    result: Verification | None

    def __call__(self, environment: Environment, submission: str) -> None: ...


class CommandVerifier:
    """Runs `command` in a session's environment when its agent has ended (`Session.after_agent`)."""

    def __init__(self, command: str, timeout_s: float, log: Path):
        self.command, self.timeout_s, self.log = command, timeout_s, log
        self.result: Verification | None = None

    def __call__(self, environment: Environment, submission: str = "") -> None:
        started = time.monotonic()
        try:
            outcome = environment.execute(in_subshell(self.command), timeout=self.timeout_s)
        except Exception as error:  # noqa: BLE001 - whatever the environment does, it is not the agent's fault
            self.result = Verification(None, None, time.monotonic() - started, f"the verifier could not run: {error}")
            self._write(f"$ {self.command}\n(could not run: {error})\n")
            return
        duration = time.monotonic() - started
        if outcome.timed_out or outcome.returncode is None:
            why = f"the verifier ran past {self.timeout_s:g} s" if outcome.timed_out else "the verifier was cut off"
            self.result = Verification(None, outcome.returncode, duration, why)
        else:
            self.result = Verification(outcome.returncode == 0, outcome.returncode, duration)
        self._write(f"$ {self.command}\n{outcome.output}\n(exit {outcome.returncode}, {duration:.2f} s"
                    + (", timed out" if outcome.timed_out else "") + ")\n")

    def _write(self, text: str) -> None:
        try:
            write_text(self.log, text)
        except OSError:
            pass


def in_subshell(command: str) -> str:
    """`command` run in a subshell of the environment's shell: its own `exit N` ends the subshell
    and is its exit status (the verdict), where in the session's shell it would end the shell
    itself and look like a verifier cut off. The newline lets a last line end in a comment or a
    heredoc's terminator."""
    return f"(\n{command}\n)"


def classify(exit_status: str, submission: str, failed: bool, verification: Verification | None,
             verified: bool) -> VerdictClass:
    """The instance's one class: how its session ended, then what its verifier said."""
    if exit_status == ExitStatus.ENVIRONMENT_ERROR.value:
        return "infra_failure"
    if failed or exit_status != ExitStatus.SUBMITTED.value:
        return "agent_error"  # a limit, a format error, the model's API, or swedeck itself on this instance
    if verified:
        if verification is None and not submission.strip():
            return "empty_patch"  # SWE-bench's grader grades no empty patch
        if verification is None or verification.resolved is None:
            return "infra_failure"
        return "resolved" if verification.resolved else "unresolved"
    return "not_verified" if submission.strip() else "empty_patch"


def verifier_output(folder: Path) -> str | None:
    """What the instance's verifier said, as kept in its folder: SWE-bench's test output
    (`test_output.txt`) when SWE-bench graded it, else `verify.log`; None when nothing graded it."""
    for name in ("test_output.txt", LOG):
        try:
            return (folder / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None
