"""Grading a SWE-bench instance with the SWE-bench package itself (`pip install 'swedeck[swebench]'`),
in the instance's own container right after its agent submits (SPEC §15 verdicts).

The steps are those of SWE-bench's `run_instance`, with SWE-bench's own parts: the instance's
test spec (`make_test_spec`: its `eval_script`, `log_parser` and `eval_type`, as SWE-bench >= 5
datasets carry them), its patch commands (`GIT_APPLY_CMDS`, each on a clean tree), its eval
script run as `/bin/bash /eval.sh`, its timeout line, and its grading (`get_eval_report`), so the
verdict is the official one by construction. One difference, on purpose: SWE-bench starts a
fresh container from the instance's image; here the agent's container is reset to its commit
(`git reset --hard`, `git clean -fd`) and used, which saves a container start per instance and
keeps anything the agent changed outside the repository (docs/batch.md).

The instance's folder keeps SWE-bench's files: `patch.diff`, `eval.sh`, `test_output.txt` and
its `report.json`, beside `verify.log` (every command this grader ran, and what it said).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..environments.base import Environment, ExecutionResult
from ..errors import UsageError
from .folder_files import write_text
from .instances import Instance
from .verify import LOG, Verification

FIELDS = ("FAIL_TO_PASS", "PASS_TO_PASS", "eval_script", "log_parser", "eval_type", "repo", "version", "image")
"""What an instance needs for SWE-bench's grading (SWE-bench >= 5 datasets carry them all)."""
PATCH_FILE = "/tmp/patch.diff"
"""Where SWE-bench's harness puts the patch in the container (`CONTAINER_PATCH_FILE`)."""
EVAL_FILE, OUTPUT_FILE = "/eval.sh", "/tmp/swedeck-test-output.txt"
STEP_TIMEOUT_S = 120.0
"""For the reset and each patch command (the eval script has the batch's `verify_timeout_s`)."""


def is_swebench(fields: dict[str, Any]) -> bool:
    """The instance can be graded by SWE-bench: it has every field of `FIELDS`."""
    return all(fields.get(name) not in (None, "") for name in FIELDS)


def require_package(instances: Iterable[Instance]) -> None:
    """A clear error before any instance runs, when some of `instances` are to be graded by
    SWE-bench (its shape, no `verify` of their own) and the package is missing."""
    if not any(is_swebench(instance.fields) and not instance.verify for instance in instances):
        return
    try:
        import swebench.harness.grading  # noqa: F401
    except ImportError:
        raise UsageError("these instances are SWE-bench's: grading them needs the SWE-bench package "
                         "(pip install 'swedeck[swebench]'), or pass --no-verify") from None


class SWEbenchVerifier:
    """Resets the agent's working tree, applies its patch, runs the instance's eval script, and
    grades the output with SWE-bench's `get_eval_report` (resolved = SWE-bench's `resolved`)."""

    def __init__(self, fields: dict[str, Any], timeout_s: float, folder: Path, model_name: str = ""):
        self.fields, self.timeout_s, self.folder, self.model_name = fields, timeout_s, folder, model_name
        self.result: Verification | None = None
        self._transcript: list[str] = []

    def __call__(self, environment: Environment, submission: str) -> None:
        started = time.monotonic()
        if not submission.strip():
            return  # nothing to grade: the instance is an empty patch (SWE-bench's `empty_patch_ids`)
        try:
            self.result = self._grade(environment, submission, started)
        except Exception as error:  # noqa: BLE001 - whatever breaks here is not the agent's fault
            self._say(f"(the grader failed: {type(error).__name__}: {error})")
            self.result = Verification(None, None, time.monotonic() - started,
                                       f"SWE-bench's grading could not run: {type(error).__name__}: {error}")
        finally:
            self._write(LOG, "\n".join(self._transcript) + "\n")

    def _grade(self, environment: Environment, submission: str, started: float) -> Verification:
        from swebench.harness.constants import APPLY_PATCH_FAIL, LOG_REPORT, LOG_TEST_OUTPUT
        from swebench.harness.grading import get_eval_report
        from swebench.harness.run_evaluation import GIT_APPLY_CMDS
        from swebench.harness.utils import make_test_spec

        spec = make_test_spec(self.fields)
        instance_id = spec.instance_id
        self._write("patch.diff", submission)
        self._write("eval.sh", spec.eval_script)
        self._run(environment, "git reset --hard -q && git clean -fdq")
        environment.write_file(PATCH_FILE, submission)
        applied, said = False, ""
        for attempt, command in enumerate(GIT_APPLY_CMDS):
            if attempt:  # SWE-bench's harness: a failed attempt leaves partial state; start clean
                self._run(environment, "git checkout -- . ; git clean -fd")
            outcome = self._run(environment, f"{command} {PATCH_FILE}")
            said = outcome.output
            if outcome.returncode == 0:
                applied = True
                break
        if not applied and self._run(environment, f"git apply --check --reverse {PATCH_FILE}").returncode == 0:
            applied = True  # the chain applied it while each command exited non-zero (SWE-bench does the same)
        timed_out = False
        if not applied:
            output = f"{APPLY_PATCH_FAIL}:\n{said}"
        else:
            environment.write_file(EVAL_FILE, spec.eval_script)
            outcome = self._run(environment, f"/bin/bash {EVAL_FILE} > {OUTPUT_FILE} 2>&1", self.timeout_s)
            timed_out = outcome.timed_out
            output = self._read(environment, OUTPUT_FILE)
            if timed_out or outcome.returncode is None:
                output += f"\n\nTimeout error: {self.timeout_s:g} seconds exceeded."  # SWE-bench's own line
        log = self.folder / LOG_TEST_OUTPUT
        write_text(log, output)
        prediction = {"instance_id": instance_id, "model_name_or_path": self.model_name, "model_patch": submission}
        report = get_eval_report(spec, prediction, str(log), include_tests_status=True)
        self._write(LOG_REPORT, json.dumps(report, indent=4))
        mine = report[instance_id]
        duration = time.monotonic() - started
        if timed_out:
            return Verification(None, None, duration, f"the tests ran past {self.timeout_s:g} s")
        if mine.get("infra_failure"):
            why = mine.get("infra_failure_reason", "the environment")
            return Verification(None, None, duration, f"SWE-bench's grading found an infra failure: {why}")
        problem = None if applied else "the patch did not apply"
        return Verification(bool(mine["resolved"]), 0 if mine["resolved"] else 1, duration, problem)

    def _run(self, environment: Environment, command: str, timeout: float = STEP_TIMEOUT_S) -> ExecutionResult:
        outcome = environment.execute(command, timeout=timeout)
        self._say(f"$ {command}\n{outcome.output}(exit {outcome.returncode}"
                  + (", timed out" if outcome.timed_out else "") + ")")
        return outcome

    def _read(self, environment: Environment, path: str) -> str:
        """The eval script's whole output (a command's own output is cut to the head and tail)."""
        try:
            return environment.read_file(path)
        except (OSError, ValueError) as error:
            self._say(f"(could not read {path}: {error})")
            return ""

    def _say(self, text: str) -> None:
        self._transcript.append(text)

    def _write(self, name: str, text: str) -> None:
        try:
            write_text(self.folder / name, text)
        except OSError:
            pass
