"""Two batches compared (SPEC §16): every instance with how it ended in each run, the ones
whose outcome differs first, and where each run's trajectory of it is (for the pair's diff).

Read from what each batch folder keeps (`batch.json`, `preds.json`, and the verdicts: a
`verdicts.json` someone wrote, else the class swedeck's own verifier gave in `batch.json`,
else SWE-bench's `report.json`), never from the trajectories, so two 500-instance folders
compare in well under a second.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..batch.output import PREDS, STATE, instance_trajectory
from ..errors import UsageError
from ..trajectory.files import read_bounded

GRADED = ("resolved", "unresolved", "empty_patch", "agent_error", "infra_failure")
"""The classes swedeck's own verdicts give that say how an instance ended (`batch.verify`)."""


@dataclass(frozen=True)
class Outcome:
    state: str
    """`done`, `failed`, `queued`, ... as the batch recorded it; `absent`: not in this batch."""
    exit_status: str | None = None
    verdict: str | None = None
    """`resolved` / `unresolved` (or the file's own word) where the batch has verdicts."""
    patch_chars: int | None = None
    """The prediction's patch size; None: no prediction."""
    steps: int = 0
    cost: float = 0.0
    trajectory: str | None = None

    @property
    def key(self) -> tuple[str | None, ...]:
        """What "the same outcome" compares: the verdict where there is one, else how it ended
        and whether it left a patch."""
        if self.verdict is not None:
            return (self.verdict,)
        return (self.state, self.exit_status, "patch" if self.patch_chars else "no patch")

    def label(self) -> str:
        if self.state == "absent":
            return "(not in this batch)"
        parts = [self.exit_status or self.state]
        if self.verdict is not None:
            parts[0] += f" → {self.verdict.replace('_', ' ')}"
        if self.patch_chars is not None:
            parts.append(f"patch {self.patch_chars:,}" if self.patch_chars else "empty patch")
        return ", ".join(parts)


@dataclass(frozen=True)
class InstancePair:
    instance_id: str
    a: Outcome
    b: Outcome

    @property
    def differs(self) -> bool:
        return self.a.key != self.b.key


@dataclass
class BatchComparison:
    a: str
    b: str
    pairs: list[InstancePair] = field(default_factory=list)
    """Those whose outcome differs first, then the rest; by instance id within each."""

    @property
    def differing(self) -> int:
        return sum(1 for pair in self.pairs if pair.differs)


def is_batch_folder(path: Path) -> bool:
    return path.is_dir() and ((path / STATE).is_file() or (path / PREDS).is_file())


def compare_batches(a: Path, b: Path) -> BatchComparison:
    runs = [_read(a), _read(b)]
    ids = sorted(set(runs[0]) | set(runs[1]))
    absent = Outcome("absent")
    pairs = [InstancePair(i, runs[0].get(i, absent), runs[1].get(i, absent)) for i in ids]
    pairs.sort(key=lambda pair: (not pair.differs, pair.instance_id))
    return BatchComparison(str(a), str(b), pairs)


MAX_STATE_BYTES = 256 << 20
"""A batch's own JSON files (`batch.json`, `preds.json`, a report) larger than this are refused:
a folder is data, and a device or a huge file there must not take the memory."""


def _json(path: Path) -> Any:
    """A batch file's JSON, read only from a regular file of a bounded size (`read_bounded`: a
    FIFO would block, `/dev/zero` never end); None when it is not there."""
    try:
        data = read_bounded(path, MAX_STATE_BYTES)
    except FileNotFoundError:
        return None
    except ValueError as error:
        raise UsageError(f"{path}: {str(error).removeprefix(path.name + ': ')}") from None
    try:
        return json.loads(data)
    except RecursionError:
        raise UsageError(f"{path}: nested too deep to be a batch file") from None
    except ValueError as error:
        raise UsageError(f"{path}: not JSON ({str(error)[:200]})") from None


def _int(value: Any) -> int:
    """A count a folder wrote, whatever its type: a number, else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else int(value) if isinstance(
        value, float) and math.isfinite(value) else 0


def _float(value: Any) -> float:
    try:
        number = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
    except OverflowError:
        return 0.0
    return number if math.isfinite(number) else 0.0


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _read(folder: Path) -> dict[str, Outcome]:
    if not is_batch_folder(folder):
        raise UsageError(f"{folder}: not a batch output folder (no batch.json or preds.json: swedeck batch -o DIR)")
    state = _json(folder / STATE) or {}
    instances = state.get("instances") if isinstance(state, dict) else None
    instances = instances if isinstance(instances, dict) else {}
    preds = _json(folder / PREDS) or {}
    if isinstance(preds, list):
        preds = {str(item.get("instance_id")): item for item in preds if isinstance(item, dict)}
    preds = preds if isinstance(preds, dict) else {}
    verdicts = _verdicts(folder, "verdicts.json")
    reported = _verdicts(folder, "report.json")
    out: dict[str, Outcome] = {}
    for instance_id in {str(key) for key in instances} | {str(key) for key in preds}:
        record = instances.get(instance_id)
        record = record if isinstance(record, dict) else {}
        prediction = preds.get(instance_id)
        patch = prediction.get("model_patch") if isinstance(prediction, dict) else None
        trajectory = _trajectory(folder, instance_id)
        own = record.get("verdict") if record.get("verdict") in GRADED else None
        out[instance_id] = Outcome(
            state=_text(record.get("state")) or ("done" if prediction is not None else "unknown"),
            exit_status=_text(record.get("exit_status")),
            verdict=verdicts.get(instance_id) or own or reported.get(instance_id),
            patch_chars=len(patch) if isinstance(patch, str) else None, steps=_int(record.get("steps")),
            cost=_float(record.get("cost")), trajectory=trajectory)
    return out


def _trajectory(folder: Path, instance_id: str) -> str | None:
    """The instance's final trajectory, where its id can name one inside the folder."""
    if not instance_id or "/" in instance_id or instance_id in (".", "..") or "\0" in instance_id:
        return None
    path = instance_trajectory(folder, instance_id)
    try:
        return str(path) if path.is_file() else None
    except (OSError, ValueError):
        return None


def _verdicts(folder: Path, name: str) -> dict[str, str]:
    """Instance id -> verdict, from `verdicts.json` (an object of ids to a word or to a record
    with `verdict`/`resolved`) or a report: swedeck's classes (its `swedeck` key) first, then
    SWE-bench's shape (`resolved_ids`, `unresolved_ids`, `error_ids`, `empty_patch_ids`)."""
    data = _json(folder / name)
    if not isinstance(data, dict):
        return {}
    out: dict[str, str] = {}
    own = data.get("swedeck")
    if isinstance(own, dict):  # swedeck's own report: its classes first
        for key, ids in own.items():
            if key.endswith("_ids") and isinstance(ids, list):
                for instance_id in ids:
                    out.setdefault(str(instance_id), key[:-len("_ids")])
    if any(key.endswith("_ids") for key in data):
        for key, word in (("resolved_ids", "resolved"), ("unresolved_ids", "unresolved"),
                          ("infra_failure_ids", "infra_failure"), ("agent_error_ids", "agent_error"),
                          ("error_ids", "error"), ("empty_patch_ids", "empty_patch")):
            ids = data.get(key)
            for instance_id in ids if isinstance(ids, list) else []:
                out.setdefault(str(instance_id), word)
        return out
    for instance_id, value in data.items():
        if isinstance(value, str):
            out[instance_id] = value
        elif isinstance(value, dict):
            verdict = value.get("verdict") or (
                None if value.get("resolved") is None else "resolved" if value["resolved"] else "unresolved")
            if verdict:
                out[instance_id] = str(verdict)
    return out


@dataclass
class ManyBatches:
    """Several batches of the same instances (issue 66): each instance's outcome in each."""

    folders: list[str]
    rows: list[tuple[str, list[Outcome]]] = field(default_factory=list)
    """(instance id, its outcome in each run): those whose outcomes differ first, then by id."""

    def summary(self) -> list[dict[str, Any]]:
        """Per run: instances, resolved, unresolved (those with a verdict), and cost."""
        out = []
        for index, folder in enumerate(self.folders):
            outcomes = [outcomes[index] for _, outcomes in self.rows if outcomes[index].state != "absent"]
            out.append({"run": index, "folder": folder, "instances": len(outcomes),
                        "resolved": sum(1 for outcome in outcomes if outcome.verdict == "resolved"),
                        "unresolved": sum(1 for outcome in outcomes if outcome.verdict not in (None, "resolved")),
                        "cost": round(sum(outcome.cost for outcome in outcomes), 6)})
        return out

    def flips(self) -> list[dict[str, Any]]:
        """Between each pair of runs: the instances resolved in one and not the other."""
        out = []
        for i in range(len(self.folders)):
            for j in range(i + 1, len(self.folders)):
                only_i = [name for name, outcomes in self.rows
                          if outcomes[i].verdict == "resolved" and outcomes[j].verdict != "resolved"]
                only_j = [name for name, outcomes in self.rows
                          if outcomes[j].verdict == "resolved" and outcomes[i].verdict != "resolved"]
                out.append({"pair": [i, j], "resolved_only_in_first": only_i, "resolved_only_in_second": only_j})
        return out


def differ(outcomes: list[Outcome]) -> bool:
    return len({outcome.key for outcome in outcomes}) > 1


def compare_many(folders: list[Path]) -> ManyBatches:
    runs = [_read(folder) for folder in folders]
    absent = Outcome("absent")
    ids = sorted(set().union(*runs))
    rows = [(name, [run.get(name, absent) for run in runs]) for name in ids]
    rows.sort(key=lambda row: (not differ(row[1]), row[0]))
    return ManyBatches([str(folder) for folder in folders], rows)
