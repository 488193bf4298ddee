"""What a batch in the local environment would run on this machine to grade its instances
(SPEC §13, §15; docs/security.md): a dataset's commands are data, so they run on the host only
when the person says so for this run."""

from __future__ import annotations

from typing import Any

from ..errors import UsageError
from .swebench_grade import is_swebench


def host_grading(config: Any, instances: list[Any], allowed: bool) -> list[str]:
    """What a batch in the local environment would run on this machine to grade its instances
    (`verify`, `batch.verify`), as lines to say once before it starts; a usage error when the
    person has not said, for this run, that it may (`--verify-on-host`), or when an instance is
    SWE-bench's, whose grading resets and cleans the working tree and runs the dataset's own eval
    script (never on a tree swedeck did not create: only in a container). [] in a container, or
    when nothing is graded."""
    if config.environment.environment_class != "local" or not config.batch.run_verifier:
        return []
    swebench = [i.instance_id for i in instances if not i.verify and is_swebench(i.fields)]
    if swebench:
        raise UsageError(f"{len(swebench)} instances ({', '.join(swebench[:3])}{', ...' if len(swebench) > 3 else ''}) "
                         "are SWE-bench's: their grading resets and cleans the working tree and runs the dataset's "
                         "eval script, so it runs only in a container (--env docker), or pass --no-verify")
    lines = []
    for instance in instances:
        command = instance.verify or config.batch.verify
        if command:
            where = instance.cwd or config.environment.cwd or "the current folder"
            lines.append(f"{instance.instance_id}: `{command}` in {where}")
    if lines and not allowed:
        raise UsageError(f"{len(lines)} instances' verify commands come from the dataset and would run on this "
                         f"machine as you ({lines[0]}{', ...' if len(lines) > 1 else ''}): pass --verify-on-host to "
                         "run them here for this batch, or --env docker, or --no-verify")
    return lines
