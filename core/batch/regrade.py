"""Grading a finished batch again without running its agents (`swedeck batch ... --grade-only`).

Each instance with a prediction in `preds.json` gets a fresh environment from its own image
(as SWE-bench's harness does), its patch, and its verifier (`instance_run.verifier_for`);
`batch.json` takes the new verdicts and `report.json` is written again over the whole input.
A command verifier (`verify`, `batch.verify`) is run after `git apply` of the patch; SWE-bench's
grader applies the patch itself. Instances without a prediction keep the class they had.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import SwedeckConfig
from ..environments import get_environment
from ..errors import UsageError
from ..exit_status import ExitStatus
from ..session import new_session_id
from .instance_run import instance_config, verifier_for
from .instances import Instance
from .output import BatchOutput, read_state
from .swebench_grade import PATCH_FILE, SWEbenchVerifier
from .verify import VerdictClass, Verification, Verifier, classify


@dataclass(frozen=True)
class Graded:
    instance_id: str
    verdict: VerdictClass
    verification: Verification | None
    done: int
    total: int


def grade_finished(config: SwedeckConfig, instances: list[Instance], folder: Path, workers: int,
                   on_graded: Callable[[Graded], None]) -> dict[str, Any]:
    """Grade every instance of `folder` that has a prediction; the new `report.json`."""
    if config.environment.environment_class != "docker":
        raise UsageError("--grade-only applies each prediction's patch and runs its verifier in a fresh container: it "
                         "needs --env docker (a batch folder is data: no patch from it is applied on this machine)")
    output = BatchOutput(folder)
    with output.claimed():
        state = read_state(folder)
        predictions = output.predictions()
        if state is None or not predictions:
            raise UsageError(f"-o {folder}: no finished batch to grade (no batch.json or preds.json)")
        todo = [i for i in instances if i.instance_id in predictions and i.instance_id in state.instances]
        if not todo:
            raise UsageError(f"-o {folder}: none of these instances has a prediction to grade")
        done = 0
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            patches = {i.instance_id: predictions[i.instance_id].get("model_patch") or "" for i in todo}
            futures = {pool.submit(_grade_one, config, instance, folder, patches[instance.instance_id]): instance
                       for instance in todo}
            for future in concurrent.futures.as_completed(futures):
                instance = futures[future]
                verification, verified = future.result()
                record = state.instances[instance.instance_id]
                if record.state in ("queued", "running", "interrupted"):
                    # a prediction is the agent's submission: a kill while it was graded left the run
                    # "running" with no status of its own, and its verdict is this grading's
                    record.state, record.exit_status = "done", ExitStatus.SUBMITTED.value
                verdict = classify(record.exit_status or ExitStatus.SUBMITTED.value, patches[instance.instance_id],
                                   record.state == "failed", verification, verified)
                record.verdict = verdict
                record.verify = None if verification is None else verification.record()
                output.write_state(state)
                done += 1
                on_graded(Graded(instance.instance_id, verdict, verification, done, len(todo)))
        return output.write_report(state)


def _grade_one(config: SwedeckConfig, instance: Instance, folder: Path, patch: str) -> tuple[Verification | None, bool]:
    verifier: Verifier | None = verifier_for(config, instance, folder / instance.instance_id)
    if verifier is None:
        return None, False
    own = instance_config(config, instance, folder / instance.instance_id / "unused")
    environment = get_environment(own.environment, new_session_id())
    try:
        environment.start()
        if patch.strip() and not isinstance(verifier, SWEbenchVerifier):
            environment.write_file(PATCH_FILE, patch)
            applied = environment.execute(f"git apply --verbose {PATCH_FILE}", timeout=120)
            if applied.returncode != 0:
                said = applied.output.strip().splitlines()
                return Verification(False, applied.returncode, 0.0,
                                    "the patch did not apply" + (f": {said[-1]}" if said else "")), True
        verifier(environment, patch)
    except Exception as error:  # noqa: BLE001 - an environment that cannot start is an infra failure
        return Verification(None, None, 0.0, f"the environment failed: {type(error).__name__}: {error}"), True
    finally:
        try:
            environment.close()
        except Exception:  # noqa: BLE001
            pass
    return verifier.result, True
