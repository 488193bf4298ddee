"""The instances of a batch (SPEC §15): read from a JSON, JSONL or text file or a Hugging Face
dataset, then filtered, sliced and shuffled as mini-swe-agent's `mini-extra swebench` does
(`--filter` is `re.match` on the id; `--shuffle` sorts by id, then shuffles with seed 42,
before the filter and the slice), so the same flags pick the same instances in both tools.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError

SHUFFLE_SEED = 42
_ID_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
RESERVED_IDS = {"preds.json", "batch.json", ".batch.lock", "report.json"}
"""The batch's own files in its folder (`output.py`); an instance's folder must not be one."""
MAX_ID_LENGTH = 200
"""An instance's longest file name is its id plus 24 characters (`.<id>.traj.json.<random>.tmp`),
and a file system holds names of 255 bytes."""
DATASET_SHORTCUTS = {
    # The names mini-swe-agent's `--subset` takes, for the same datasets.
    "lite": "princeton-nlp/SWE-Bench_Lite",
    "verified": "princeton-nlp/SWE-Bench_Verified",
    "full": "princeton-nlp/SWE-Bench",
    "multimodal": "princeton-nlp/SWE-Bench_Multimodal",
    "multilingual": "swe-bench/SWE-Bench_Multilingual",
}


@dataclass(frozen=True)
class Instance:
    instance_id: str
    task: str
    image_name: str | None = None
    """The Docker image, as SWE-bench-Live MultiLang names it (wins over `docker_image`, SPEC §8)."""
    docker_image: str | None = None
    """`docker_image`, else `image` (as SWE-bench >= 5 datasets name it)."""
    cwd: str | None = None
    """Where the commands run (a plain task list; SWE-bench images have their own)."""
    verify: str | None = None
    """A shell command that grades the instance in its environment after its agent ends (exit 0:
    resolved), Harbor-style; else the batch's (`batch.verify`)."""
    fields: dict[str, Any] = field(default_factory=dict, compare=False)
    """Everything the record held (`repo`, `base_commit`, ...), for the instance template."""


def parse_instance(record: Any, position: int) -> Instance:
    """One record: a SWE-bench instance (`instance_id`, `problem_statement`, ...), a task
    (`task`, optional `id`/`instance_id`, `cwd`), or a bare string (the task)."""
    if isinstance(record, str):
        record = {"task": record}
    if not isinstance(record, dict):
        raise UsageError(f"instance {position + 1}: expected an object or a string, got {type(record).__name__}")
    task = record.get("problem_statement", record.get("task"))
    if not isinstance(task, str) or not task.strip():
        raise UsageError(f"instance {position + 1}: needs a non-empty `problem_statement` (or `task`)")
    given = record.get("instance_id", record.get("id"))
    instance_id = str(given) if given not in (None, "") else f"task-{position + 1:04d}"
    if _ID_CHARS.search(instance_id) or instance_id in (".", ".."):
        raise UsageError(f"instance {position + 1}: id {instance_id!r} cannot name a folder "
                         "(letters, digits, '.', '_' and '-' only)")
    if instance_id.startswith(".") or instance_id.lower() in RESERVED_IDS:
        raise UsageError(f"instance {position + 1}: id {instance_id!r} would be one of the batch's own files "
                         f"({', '.join(sorted(RESERVED_IDS))}, or a hidden name)")
    if len(instance_id) > MAX_ID_LENGTH:
        raise UsageError(f"instance {position + 1}: id {instance_id[:40]!r}… is {len(instance_id)} characters; "
                         f"its files' names must fit a file system (at most {MAX_ID_LENGTH})")
    return Instance(instance_id=instance_id, task=task, image_name=_text(record.get("image_name")),
                    docker_image=_text(record.get("docker_image") or record.get("image")), cwd=_text(record.get("cwd")),
                    verify=_text(record.get("verify")),
                    fields={key: value for key, value in record.items() if isinstance(key, str)})


def _text(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def load_instances(source: str, split: str = "test") -> list[Instance]:
    """Instances from a file (`.json`: a list or an object of records; `.jsonl`; `.txt`: one
    task per line) or, when no such file exists, a Hugging Face dataset by name."""
    path = Path(source)
    if path.is_file():
        records = _read_file(path)
    elif path.suffix in (".json", ".jsonl", ".txt") or "/" not in source and source not in DATASET_SHORTCUTS:
        raise UsageError(f"{source}: no such file (a Hugging Face dataset is named like owner/name)")
    else:
        records = _read_dataset(DATASET_SHORTCUTS.get(source, source), split)
    instances = [parse_instance(record, position) for position, record in enumerate(records)]
    seen: set[str] = set()
    for instance in instances:
        if instance.instance_id in seen:
            raise UsageError(f"{source}: instance id {instance.instance_id!r} appears twice")
        seen.add(instance.instance_id)
    if not instances:
        raise UsageError(f"{source}: no instances")
    return instances


def _read_file(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    if path.suffix == ".txt":
        return [line.strip() for line in text.splitlines() if line.strip()]
    try:
        if path.suffix == ".jsonl":
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not valid JSON{'L' if path.suffix == '.jsonl' else ''}: {exc}") from None
    if isinstance(data, dict):  # {id: record}, as SWE-bench's predictions and some exports are keyed
        return [{"instance_id": key, **value} if isinstance(value, dict) else value for key, value in data.items()]
    if not isinstance(data, list):
        raise UsageError(f"{path}: expected a list of instances")
    return data


def _read_dataset(name: str, split: str) -> list[Any]:
    try:
        import datasets  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise UsageError(f"{name}: reading a Hugging Face dataset needs the `datasets` package: "
                         "pip install 'swedeck[batch]' (or give a .json/.jsonl file)") from None
    try:
        return list(datasets.load_dataset(name, split=split))
    except Exception as exc:  # noqa: BLE001 - the library's many errors: one line for the person
        raise UsageError(f"{name} (split {split}): cannot load the dataset: {type(exc).__name__}: {exc}") from None


def select(instances: list[Instance], *, filter_re: str = "", slice_spec: str = "",
           shuffle: bool = False) -> list[Instance]:
    """`--shuffle`, then `--filter` (a regex matched at the start of the id), then `--slice`
    (`start:stop[:step]`, Python's meaning), in mini-swe-agent's order."""
    if shuffle:
        instances = sorted(instances, key=lambda instance: instance.instance_id)
        random.Random(SHUFFLE_SEED).shuffle(instances)
    if filter_re:
        try:
            pattern = re.compile(filter_re)
        except re.error as exc:
            raise UsageError(f"--filter {filter_re!r}: not a regular expression: {exc}") from None
        instances = [instance for instance in instances if pattern.match(instance.instance_id)]
    if slice_spec:
        instances = instances[parse_slice(slice_spec)]
    return instances


def parse_slice(spec: str) -> slice:
    parts = spec.split(":")
    try:
        if len(parts) > 3:
            raise ValueError
        values = [int(part) if part.strip() else None for part in parts]
    except ValueError:
        raise UsageError(f"--slice {spec!r}: expected start:stop[:step], e.g. 0:10") from None
    if len(values) == 1:  # "5": the first five, as `:5`
        return slice(None, values[0])
    if len(values) == 3 and values[2] == 0:
        raise UsageError(f"--slice {spec!r}: the step cannot be 0")
    return slice(*values)
