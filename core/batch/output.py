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
from .folder_files import real_folder

PREDS = "preds.json"
STATE = "batch.json"
LOCK = ".batch.lock"
PREVIOUS = ".previous"
"""Inside an instance's folder: its earlier runs' files, one numbered folder each."""
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
    reason: str | None = None
    """Why it ended other than by submitting: the API error, the limit, the environment's failure."""
    previous: list[dict[str, Any]] = field(default_factory=list)
    """Its earlier runs' records, oldest first, each with `folder`: where that run's files were
    moved (`<id>/.previous/<n>`) when `--rerun` or `--redo` ran it again."""

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> InstanceState:
        """A `batch.json` record; keys a later swedeck added are kept out, not an error (the
        folder's other records must survive a read by an older or newer swedeck)."""
        known = {name: record[name] for name in cls.__dataclass_fields__ if name in record}
        return cls(**known)


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
        instances = {str(key): InstanceState.from_record(value) for key, value in data.pop("instances").items()}
        known = {name: data[name] for name in BatchState.__dataclass_fields__ if name in data and name != "instances"}
        return BatchState(**known, instances=instances)
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
        fd = os.open(self.folder / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
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

    def forget(self, instance_id: str) -> str | None:
        """Before an instance runs (again): its prediction leaves `preds.json` and its earlier
        run's files move to `<id>/.previous/<n>/`, so a crash in between never leaves the old
        result looking like the new one, and nothing of the old one is lost. The folder they
        moved to, relative to the instance's (None: it had no files)."""
        with self._lock:
            predictions = self.predictions()
            if predictions.pop(instance_id, None) is not None:
                write_atomically(self.preds_path, predictions)
        folder = self.folder / instance_id
        if folder.is_symlink():  # a tampered folder: the link goes, whatever it points at stays untouched
            folder.unlink()
            return None
        try:
            names = [entry for entry in folder.iterdir() if entry.name != PREVIOUS]
        except OSError:
            return None
        if not names:
            return None
        kept = real_folder(folder / PREVIOUS)
        number = 1 + max((int(entry.name) for entry in kept.iterdir() if entry.name.isdigit()), default=0)
        target = kept / str(number)
        target.mkdir()
        for entry in names:
            entry.rename(target / entry.name)
        return f"{PREVIOUS}/{number}"

    def write_state(self, state: BatchState) -> None:
        with self._lock:
            state.updated_at = time.time()
            write_atomically(self.folder / STATE, state.to_record())

    def write_report(self, state: BatchState) -> dict[str, Any]:
        """`report.json` (`report_of`), over every instance the folder has a record of."""
        with self._lock:
            report = report_of(state, self.predictions(), self.folder)
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


def swebench_outcome(record: InstanceState, prediction: dict[str, Any] | None) -> str:
    """What SWE-bench's `make_run_report` would call the instance, given the same predictions and
    the same grading: `incomplete` (no prediction), `empty_patch` (its `model_patch` is "" or
    None, SWE-bench's own test: not graded), `resolved` / `unresolved` (its tests ran and were
    graded: SWE-bench's `report.json` exists), else `error` (a patch that did not apply, tests
    that timed out, a verifier that could not run, or nothing graded it)."""
    if prediction is None:
        return "incomplete"
    if prediction.get("model_patch") in ("", None):
        return "empty_patch"
    verify = record.verify or {}
    if record.verdict in ("resolved", "unresolved") and not verify.get("problem"):
        return record.verdict
    return "error"


def report_of(state: BatchState, predictions: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`report.json`: SWE-bench's run report over every instance the folder has a record of,
    each key meaning what `make_run_report` means by it on the same predictions and grading
    (`swebench_outcome`), and swedeck's own classes under `swedeck`.

    SWE-bench's `infra_failure_ids`, `ambiguous_failure_ids` and `failure_reasons` are its own
    classification of the logs; they are there when the SWE-bench package is installed."""
    outcome: dict[str, list[str]] = {}
    for instance_id, record in sorted(state.instances.items()):
        prediction = predictions.get(instance_id)
        outcome.setdefault(swebench_outcome(record, prediction if isinstance(prediction, dict) else None),
                           []).append(instance_id)
    completed = sorted(outcome.get("resolved", []) + outcome.get("unresolved", []))
    report: dict[str, Any] = {
        "total_instances": len(state.instances), "submitted_instances": len(predictions),
        "completed_instances": len(completed), "resolved_instances": len(outcome.get("resolved", [])),
        "unresolved_instances": len(outcome.get("unresolved", [])),
    }
    classified: dict[str, tuple[str, str]] = {}
    try:
        from swebench.harness import infra_failure
    except ImportError:  # without SWE-bench's package, its log classification is not ours to guess
        infra_failure = None
    if infra_failure is not None:
        for instance_id in sorted(outcome.get("unresolved", []) + outcome.get("error", [])):
            # SWE-bench's own reading of the logs: the test output, and the harness's log (`verify.log` here)
            found = infra_failure.classify_logs(folder / instance_id / "test_output.txt",
                                                folder / instance_id / "verify.log")
            if found is not None:
                classified[instance_id] = found
        infra = sorted(i for i, (_, tier) in classified.items() if tier == infra_failure.TIER_ENVIRONMENT)
        ambiguous = sorted(i for i, (_, tier) in classified.items() if tier != infra_failure.TIER_ENVIRONMENT)
        report.update(infra_failure_instances=len(infra), ambiguous_failure_instances=len(ambiguous))
    report.update({
        "empty_patch_instances": len(outcome.get("empty_patch", [])), "error_instances": len(outcome.get("error", [])),
        "completed_ids": completed, "incomplete_ids": outcome.get("incomplete", []),
        "empty_patch_ids": outcome.get("empty_patch", []), "submitted_ids": sorted(predictions),
        "resolved_ids": outcome.get("resolved", []), "unresolved_ids": outcome.get("unresolved", []),
    })
    if infra_failure is not None:
        report.update(infra_failure_ids=infra, ambiguous_failure_ids=ambiguous,
                      failure_reasons={i: reason for i, (reason, _) in sorted(classified.items())})
    report.update(error_ids=outcome.get("error", []), schema_version=2, swedeck=verdicts_of(state))
    return report


def verdicts_of(state: BatchState) -> dict[str, Any]:
    """swedeck's own classes (`batch.verify.CLASSES`), the report's `swedeck` key: each class's
    ids, and why each instance that did not submit ended."""
    from .verify import CLASSES

    by_class: dict[str, list[str]] = {name: [] for name in CLASSES}
    for instance_id, record in sorted(state.instances.items()):
        by_class.setdefault(record.verdict or _older(record), []).append(instance_id)
    reasons = {i: record.reason for i, record in sorted(state.instances.items()) if record.reason}
    return {**{f"{name}_ids": ids for name, ids in by_class.items()}, "reasons": reasons,
            "cost_usd": cost_of_batch(state, by_class)}


def cost_of_batch(state: BatchState, by_class: dict[str, list[str]]) -> dict[str, Any]:
    """What the batch cost (issue 65), as its instances' runs counted it: the total, each
    instance's, and each class's (what a resolved instance cost, against an unresolved one)."""
    each = {instance_id: round(record.cost, 8) for instance_id, record in sorted(state.instances.items())}
    classes = {name: round(sum(state.instances[i].cost for i in ids), 8) for name, ids in by_class.items() if ids}
    return {"total": round(sum(record.cost for record in state.instances.values()), 8), "by_class": classes,
            "by_instance": each}
