"""One instance of a batch: its config, its headless session, and what it gives back.

The same functions run in a thread of `swedeck batch` (executor `local`) and in a Ray worker
process (executor `ray`); either way litellm is imported once per process, by the first
instance that queries, and every later instance reuses it.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import events as ev
from ..config import SwedeckConfig
from ..exit_status import ExitStatus
from ..session import Session
from .instances import Instance
from .swebench_grade import SWEbenchVerifier, is_swebench
from .verify import LOG, CommandVerifier, VerdictClass, Verification, Verifier, classify

FAILED_STATUSES = {ExitStatus.ENVIRONMENT_ERROR.value}
"""Ends that say nothing about the agent (the environment did not start or broke): such an
instance counts as failed and is retried by the next run, as a crash is."""


@dataclass
class InstanceResult:
    instance_id: str
    exit_status: str
    submission: str = ""
    cost: float = 0.0
    steps: int = 0
    duration_s: float = 0.0
    trajectory_path: str | None = None
    message: str = ""
    error: str | None = None
    """The traceback, when swedeck itself failed on the instance."""
    warnings: list[str] = field(default_factory=list)
    """The session's warnings about its result (a submission with a secret masked)."""
    final_trajectory: str | None = None
    """The final file's text (Ray: the driver writes it when the worker's disk is not the output's)."""
    verified: bool = False
    """A verifier was named for the instance (and not switched off): its class comes from it."""
    verification: Verification | None = None
    """What the verifier said, when the agent submitted and it ran."""

    @property
    def verdict(self) -> VerdictClass:
        return classify(self.exit_status, self.submission, self.failed, self.verification, self.verified)

    @property
    def failed(self) -> bool:
        return self.error is not None or self.exit_status in FAILED_STATUSES

    @property
    def interrupted(self) -> bool:
        return self.exit_status == ExitStatus.INTERRUPTED.value


def instance_config(config: SwedeckConfig, instance: Instance, trajectory_base: Path) -> SwedeckConfig:
    """The batch's config with what the instance names: its image (SPEC §8: `image_name` >
    `docker_image` > the batch's image > derived from a SWE-bench `instance_id`), its working
    directory, and its trajectory path. Always yolo: nobody is there to confirm."""
    own = config.model_copy(deep=True)
    own.agent.mode = "yolo"
    own.run.output = str(trajectory_base)
    environment = own.environment
    if instance.image_name:
        environment.image_name = instance.image_name
    if instance.docker_image:
        environment.docker_image = instance.docker_image
    if "instance_id" in instance.fields:  # a SWE-bench instance; plain tasks' ids name no image
        environment.instance_id = instance.instance_id
    if instance.cwd:
        environment.cwd = instance.cwd
    return own


def verifier_for(config: SwedeckConfig, instance: Instance, folder: Path) -> Verifier | None:
    """What grades the instance, unless `batch.run_verifier` is off: its own `verify` command;
    else SWE-bench's grading, for an instance in SWE-bench's shape (`swebench_grade.FIELDS`);
    else the batch's `batch.verify`. None: nothing grades it."""
    if not config.batch.run_verifier:
        return None
    timeout = config.batch.verify_timeout_s
    if instance.verify:
        return CommandVerifier(instance.verify, timeout, folder / LOG)
    if is_swebench(instance.fields):
        return SWEbenchVerifier(instance.fields, timeout, folder, config.model.model_name or "")
    if config.batch.verify:
        return CommandVerifier(config.batch.verify, timeout, folder / LOG)
    return None


@dataclass(frozen=True)
class Prepared:
    session: Session
    verifier: Verifier | None


def prepare(config: SwedeckConfig, instance: Instance, trajectory_base: Path) -> Prepared:
    """The instance's session, with its verifier (`verifier_for`) to run in its environment once
    the agent submits."""
    session = Session(instance_config(config, instance, trajectory_base), instance.task, interactive=False)
    verifier = verifier_for(config, instance, trajectory_base.parent)
    session.after_agent = verifier
    return Prepared(session, verifier)


def run_prepared(prepared: Prepared, instance_id: str,
                 on_event: Callable[[ev.Event], None] | None = None) -> InstanceResult:
    """Run the instance's session to its end; never raises (a crash is a failed result)."""
    started = time.monotonic()
    result = InstanceResult(instance_id=instance_id, exit_status="")

    def emit(event: ev.Event) -> None:
        if isinstance(event, ev.ProgressUpdated):
            result.cost, result.steps = event.cost, event.step
        if on_event is not None:
            on_event(event)

    session, verifier = prepared.session, prepared.verifier
    result.verified = verifier is not None
    try:
        outcome = session.run(emit)
    except Exception as exc:  # noqa: BLE001 - one instance's crash never stops the batch
        result.exit_status, result.message = type(exc).__name__, str(exc)
        result.error = traceback.format_exc()
        result.trajectory_path = session.trajectory_path
    else:
        result.exit_status = outcome.exit_status.value
        result.submission, result.message = outcome.submission, outcome.message
        result.warnings = list(outcome.warnings)
        result.trajectory_path = outcome.trajectory_path
    result.verification = verifier.result if verifier is not None else None
    result.duration_s = time.monotonic() - started
    return result
