"""A batch's output folder (SPEC §15):

    DIR/preds.json            SWE-bench predictions: {id: {instance_id, model_name_or_path, model_patch}}
    DIR/batch.json            the batch's state: every selected instance, queued to done
    DIR/<id>/<id>.traj.jsonl  the live trajectory while the instance runs
    DIR/<id>/<id>.traj.json   the final trajectory

`preds.json` is keyed by instance id, as mini-swe-agent writes it (SWE-bench's harness reads
a list or such an object). Both JSON files are replaced atomically (temp file, fsync,
rename), so a batch killed at any moment leaves whole files, and an instance is in
`preds.json` only once it has finished: a re-run skips exactly those.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..errors import UsageError
from ..trajectory.files import final_path, remove_orphan_temps, write_atomically

PREDS = "preds.json"
STATE = "batch.json"
LOCK = ".batch.lock"
State = Literal["queued", "running", "done", "failed", "interrupted", "skipped"]


@dataclass
class InstanceState:
    state: State = "queued"
    exit_status: str | None = None
    cost: float = 0.0
    steps: int = 0
    duration_s: float | None = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    """What the person must know of its result (its patch holds a secret value of theirs, masked)."""
    verdict: str | None = None
    """The instance's class (`batch.verify.CLASSES`), once it ended."""
    verify: dict[str, Any] | None = None
    """What its verifier did: `returncode`, `duration_s`, `problem` (None: none ran)."""


@dataclass
class BatchState:
    """What `batch.json` holds; `swedeck watch DIR` reads it for the rows without a trajectory."""

    model: str
    executor: str
    workers: int
    instances: dict[str, InstanceState] = field(default_factory=dict)
    started_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    ended: bool = False
    pid: int = field(default_factory=os.getpid)

    def to_record(self) -> dict[str, Any]:
        return {**asdict(self), "instances": {key: asdict(value) for key, value in self.instances.items()}}


def instance_trajectory(folder: Path, instance_id: str) -> Path:
    """The instance's final trajectory in the batch's `folder` (its live file is beside it)."""
    return final_path(folder / instance_id / instance_id)


def read_state(folder: Path) -> BatchState | None:
    """The batch state in `folder`, or None when there is none (or it cannot be read)."""
    try:
        data = json.loads((folder / STATE).read_text(encoding="utf-8"))
        instances = {key: InstanceState(**value) for key, value in data.pop("instances").items()}
        return BatchState(**data, instances=instances)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


class BatchOutput:
    """The output folder of one running batch. Writers are this process's threads; a second
    batch on the same folder is refused (a lock held while the batch runs)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.preds_path = folder / PREDS
        self._lock = threading.Lock()
        self._lock_fd: int | None = None

    @contextmanager
    def claimed(self) -> Iterator[BatchOutput]:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"-o {self.folder}: cannot create the folder: {exc.strerror or exc}") from None
        fd = os.open(self.folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise UsageError(f"-o {self.folder}: another swedeck batch is writing to this folder") from None
        self._lock_fd = fd
        for name in (PREDS, STATE):  # a batch killed inside an atomic write left its temp file
            remove_orphan_temps(self.folder / name)
        try:
            yield self
        finally:
            os.close(fd)
            self._lock_fd = None

    def trajectory_base(self, instance_id: str) -> Path:
        """`-o` of the instance's session: its final file (`instance_trajectory`)."""
        return instance_trajectory(self.folder, instance_id)

    def predictions(self) -> dict[str, Any]:
        if not self.preds_path.exists():
            return {}
        try:
            data = json.loads(self.preds_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"{self.preds_path}: cannot read the predictions of the earlier run: {exc}") from None
        if isinstance(data, list):  # SWE-bench's list form, if someone rewrote the file
            data = {item["instance_id"]: item for item in data if isinstance(item, dict) and "instance_id" in item}
        if not isinstance(data, dict):
            raise UsageError(f"{self.preds_path}: expected SWE-bench predictions (an object keyed by instance id)")
        return data

    def finished(self) -> set[str]:
        return set(self.predictions())

    def record_prediction(self, instance_id: str, model_name: str, patch: str) -> None:
        with self._lock:
            predictions = self.predictions()
            predictions[instance_id] = {"model_name_or_path": model_name, "instance_id": instance_id,
                                        "model_patch": patch}
            write_atomically(self.preds_path, predictions)

    def forget(self, instance_id: str) -> None:
        """Before an instance runs (again): its prediction and final file go, so a crash in
        between never leaves the old result looking like the new one."""
        with self._lock:
            predictions = self.predictions()
            if predictions.pop(instance_id, None) is not None:
                write_atomically(self.preds_path, predictions)
        self.trajectory_base(instance_id).unlink(missing_ok=True)

    def write_state(self, state: BatchState) -> None:
        with self._lock:
            state.updated_at = time.time()
            write_atomically(self.folder / STATE, state.to_record())

    def write_report(self, state: BatchState) -> dict[str, Any]:
        """`report.json` in SWE-bench's report shape, over every instance the batch selected."""
        report = report_of(state)
        with self._lock:
            write_atomically(self.folder / REPORT, report)
        return report


REPORT = "report.json"


def _older(record: InstanceState) -> str:
    """The class of a record a batch from before verdicts wrote (it has none of its own)."""
    if record.state in ("queued", "running", "interrupted"):
        return "not_run"
    if record.state == "failed":
        return "infra_failure" if record.exit_status == "EnvironmentError" else "agent_error"
    return "not_verified" if record.exit_status == "Submitted" else "agent_error"


def report_of(state: BatchState) -> dict[str, Any]:
    """SWE-bench's run report (`make_run_report`: totals, `*_ids`, `schema_version` 2) for the
    batch's instances by class, plus `infra_failure_ids` (as SWE-bench's harness names them),
    `agent_error_ids`, `not_run_ids` and `not_verified_ids`. The denominator is the whole input."""
    by_class: dict[str, list[str]] = {}
    for instance_id, record in sorted(state.instances.items()):
        verdict = record.verdict or _older(record)
        by_class.setdefault(verdict, []).append(instance_id)

    def ids(*classes: str) -> list[str]:
        return sorted(i for name in classes for i in by_class.get(name, []))

    completed = ids("resolved", "unresolved")
    submitted = sorted(i for i, r in state.instances.items() if r.exit_status is not None and r.verdict != "not_run")
    errors = ids("agent_error", "infra_failure")
    return {
        "total_instances": len(state.instances), "submitted_instances": len(submitted),
        "completed_instances": len(completed), "resolved_instances": len(ids("resolved")),
        "unresolved_instances": len(ids("unresolved")), "empty_patch_instances": len(ids("empty_patch")),
        "error_instances": len(errors), "completed_ids": completed,
        "incomplete_ids": sorted(set(state.instances) - set(completed)), "empty_patch_ids": ids("empty_patch"),
        "submitted_ids": submitted, "resolved_ids": ids("resolved"), "unresolved_ids": ids("unresolved"),
        "error_ids": errors, "infra_failure_ids": ids("infra_failure"), "agent_error_ids": ids("agent_error"),
        "not_run_ids": ids("not_run"), "not_verified_ids": ids("not_verified"), "schema_version": 2,
    }
