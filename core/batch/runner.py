"""`swedeck batch` (SPEC §15): run the selected instances, `workers` at a time, record each
as it ends, and stop cleanly on a signal or at the batch's cost limit.

The batch's own loop runs in the main thread (signals arrive there): it keeps `workers`
instances submitted, waits for one to end, records it (`preds.json`, `batch.json`, the
tally) and submits the next. An instance that crashed or whose environment failed is not
written to `preds.json`, so the next run retries it; an instance stopped by a signal is
not either. Every other end (Submitted, a limit, format errors, ...) is a prediction, an
empty patch included, as in mini-swe-agent.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from .. import events as ev
from ..config import SwedeckConfig
from ..errors import UsageError
from ..exit_status import ExitStatus
from ..headless import ending_on_signals
from ..session import build_redactor
from ..trajectory.files import write_atomically
from .executors import Executor, Handle, LocalExecutor, RayExecutor
from .folder_files import real_folder
from .host_grading import host_grading
from .instance_run import InstanceResult
from .instances import Instance
from .output import BatchOutput, BatchState, InstanceState, State, read_state
from .progress import BatchEnded, BatchEvent, BatchNotice, BatchStarted, InstanceFinished, InstanceStarted, Tally
from .swebench_grade import require_package
from .verify import CLASSES

WAIT_S = 0.5
"""How often the loop wakes while instances run: redraws the status line, checks the stop flag."""
EXIT_FAILED, EXIT_LIMIT, EXIT_INTERRUPTED = 1, 3, 130


@dataclass
class BatchOptions:
    workers: int = 1
    executor: str = "local"
    address: str | None = None
    redo: bool = False
    total_cost_limit: float = 0.0
    """Dollars for the whole batch (0: none); once reached no instance starts."""
    rerun: tuple[str, ...] = ()
    """Classes (`batch.verify.CLASSES`) of finished instances to run again (`--rerun infra,agent-error`)."""
    verify_on_host: bool = False
    """`--verify-on-host`: in the local environment, the dataset's verify commands may run on this machine."""


class Batch:
    def __init__(self, config: SwedeckConfig, instances: list[Instance], folder: Path, options: BatchOptions,
                 sink: Callable[[BatchEvent], None], tally: Tally | None = None):
        if options.workers < 1:
            raise UsageError("--workers must be at least 1")
        if options.executor not in ("local", "ray"):
            raise UsageError(f"--executor {options.executor!r}: choose local or ray")
        if config.batch.run_verifier:
            require_package(instances)  # said before anything runs, not once per instance
        self._host_lines = host_grading(config, instances, options.verify_on_host)  # refused before anything runs
        self.config = config
        self.instances = instances
        self.output = BatchOutput(folder)
        self.options = options
        self.sink = sink
        self.tally = tally or Tally(workers=options.workers)
        self.model_name = config.model.model_name or ""
        # Secrets out of preds.json, batch.json and the progress output, as out of trajectories (SPEC §9.4)
        self._redactor = build_redactor(config)
        self._redact = self._redactor.text
        self.state = BatchState(model=self.model_name, executor=options.executor, workers=options.workers)
        self._stop = threading.Event()
        self._live_cost: dict[str, float] = {}
        """The running instances' cost so far (local executor: from their events)."""
        self._finished_cost = 0.0
        self._lock = threading.Lock()
        self._earlier: dict[str, InstanceState] = {}
        """The folder's records before this run (`batch.json`), by instance id."""

    def stop(self) -> None:
        """A signal or Ctrl+C: no instance starts; running ones end `Interrupted`."""
        self._stop.set()

    def run(self) -> int:
        started = time.monotonic()
        with self.output.claimed():
            earlier = read_state(self.output.folder)
            before = earlier.instances if earlier is not None else {}
            finished = set() if self.options.redo else self.output.finished()
            finished -= {i for i, record in before.items() if record.verdict in self.options.rerun}
            todo = [instance for instance in self.instances if instance.instance_id not in finished]
            # Every instance the folder has a record of stays in it: a run that selects others
            # (--filter, --slice) adds and updates, never forgets (nor grades anew) the rest.
            self.state.instances = dict(before)
            self._earlier = before
            for instance in self.instances:
                record = before.get(instance.instance_id)
                self.state.instances[instance.instance_id] = (
                    InstanceState(state="queued", previous=record.previous if record else [])
                    if instance in todo
                    else replace(record, state="skipped") if record is not None else InstanceState(state="skipped"))
            self.output.write_state(self.state)
            self.tally.to_run, self.tally.workers = len(todo), self.options.workers
            self.sink(BatchStarted(total=len(self.instances), skipped=len(self.instances) - len(todo),
                                   workers=self.options.workers, executor=self.options.executor,
                                   output=str(self.output.folder)))
            if self._host_lines:  # said once, before any runs: what the dataset will run on this machine
                shown = self._host_lines[:5] + ([f"... and {len(self._host_lines) - 5} more"]
                                                if len(self._host_lines) > 5 else [])
                self.sink(BatchNotice("--verify-on-host: these dataset commands run on this machine, as you:\n    "
                                      + "\n    ".join(shown)))
            not_run, limit_reached = self._run_all(todo)
            for record in self.state.instances.values():
                if record.state in ("queued", "interrupted"):
                    record.verdict = "not_run"
            self.state.ended = True
            self.output.write_state(self.state)
            report = self.output.write_report(self.state)
        tally = self.tally
        infra = report["swedeck"]["infra_failure_ids"]
        code = (EXIT_INTERRUPTED if self._stop.is_set() else EXIT_FAILED if tally.failed or infra
                else EXIT_LIMIT if limit_reached else 0)
        verdicts: dict[str, int] = {name: len(report["swedeck"][f"{name}_ids"]) for name in CLASSES}
        self.sink(BatchEnded(exit_statuses=dict(tally.exit_statuses), done=tally.done, failed=tally.failed,
                             not_run=not_run, warned=list(tally.warned), cost=tally.cost,
                             duration_s=time.monotonic() - started, exit_code=code, verdicts=verdicts,
                             class_cost=dict(report["swedeck"]["cost_usd"]["by_class"])))
        return code

    def _executor(self) -> Executor:
        if self.options.executor == "ray":
            return RayExecutor(self.config, self.options.workers, self.options.address)
        return LocalExecutor(self.config, self.options.workers, self._on_event, self._on_submitted)

    def _on_submitted(self, instance_id: str, submission: str) -> None:
        """An instance's agent submitted (local executor, its thread): its prediction is kept now,
        before it is graded (a kill during grading leaves it, and `--grade-only` grades it)."""
        self.output.record_prediction(instance_id, self.model_name, self._redactor.exact(submission))
        record = self.state.instances.get(instance_id)
        if record is not None:  # submitted: a kill while it is graded leaves that said, not "running" alone
            record.exit_status = ExitStatus.SUBMITTED.value
            self.output.write_state(self.state)

    def _run_all(self, todo: list[Instance]) -> tuple[int, bool]:
        queue = deque(todo)
        running: dict[Any, Instance] = {}
        limit = self.options.total_cost_limit
        limit_reached = False
        executor = self._executor()
        try:
            with ending_on_signals(self.stop, ctrl_c=True):  # Ctrl+C too: the loop never sees a KeyboardInterrupt
                while queue or running:
                    if not limit_reached and limit and self._cost() >= limit:
                        limit_reached = True
                        self.sink(BatchNotice(f"the batch's cost limit (${limit:.2f}) is reached: no new instance "
                                              "starts; the running ones finish"))
                    while queue and len(running) < self.options.workers and not (self._stop.is_set()
                                                                                   or limit_reached):
                        instance = queue.popleft()
                        running[self._start(executor, instance)] = instance
                    if not running:
                        break
                    ended = executor.wait(list(running), WAIT_S)
                    if self._stop.is_set():
                        executor.stop()
                    for handle, result in ended:
                        self._record(running.pop(handle), result)
                    self._tick()
        finally:
            if self._stop.is_set():
                executor.stop()
            executor.close()
        return len(queue), limit_reached

    def _tick(self) -> None:
        self.tally.cost = self._cost()
        tick = getattr(self.sink, "tick", None)
        if tick is not None:
            tick()

    def _start(self, executor: Executor, instance: Instance) -> Handle:
        instance_id = instance.instance_id
        previous = list(self.state.instances[instance_id].previous)
        moved = self.output.forget(instance_id)
        earlier = self._earlier.get(instance_id)
        if earlier is not None and earlier.state not in ("queued", "running"):
            # the run it replaces, kept beside the new one (--rerun, --redo, a retried failure)
            record = asdict(replace(earlier, previous=[]))
            del record["previous"]  # its own earlier runs are the list it joins
            previous.append({**record, "folder": moved})
        base = self.output.trajectory_base(instance_id)
        real_folder(base.parent)
        handle = executor.submit(instance, base)
        self.state.instances[instance_id] = InstanceState(state="running", previous=previous)
        self.output.write_state(self.state)
        self.tally.running.add(instance_id)
        self.sink(InstanceStarted(instance_id))
        return handle

    def _on_event(self, instance_id: str, event: ev.Event) -> None:
        """A running instance's event (local executor, its thread): its cost so far."""
        if isinstance(event, ev.ProgressUpdated):
            with self._lock:
                self._live_cost[instance_id] = event.cost

    def _cost(self) -> float:
        with self._lock:
            return self._finished_cost + sum(self._live_cost.values())

    def _record(self, instance: Instance, result: InstanceResult) -> None:
        instance_id = result.instance_id = instance.instance_id
        # The patch as the run produced it: SWE-bench must be able to apply it. Only the person's
        # own secret values are masked, and the session has already said so in `warnings`.
        result.submission, result.message = self._redactor.exact(result.submission), self._redact(result.message)
        result.warnings = [self._redact(warning) for warning in result.warnings]
        result.error = result.error and self._redact(result.error)
        base = self.output.trajectory_base(instance_id)
        if result.final_trajectory is not None and not base.exists():  # a Ray worker with its own disk
            write_atomically(base, json.loads(result.final_trajectory))
        with self._lock:
            self._live_cost.pop(instance_id, None)
            self._finished_cost += result.cost
        tally = self.tally
        tally.running.discard(instance_id)
        interrupted = result.interrupted and self._stop.is_set()
        state: State
        if interrupted:
            state = "interrupted"
        elif result.failed:
            state, tally.failed = "failed", tally.failed + 1
        else:
            state, tally.done = "done", tally.done + 1
            self.output.record_prediction(instance_id, self.model_name, result.submission)
        if not interrupted:
            tally.exit_statuses[result.exit_status] += 1
            tally.durations.append(result.duration_s)
        tally.cost = self._cost()
        verdict = "not_run" if interrupted else result.verdict
        tally.verdicts[verdict] += 1
        verification = result.verification
        ended_early = result.failed or result.exit_status != ExitStatus.SUBMITTED.value
        self.state.instances[instance_id] = InstanceState(
            state=state, exit_status=result.exit_status, cost=result.cost, steps=result.steps,
            duration_s=round(result.duration_s, 3), error=result.message if result.failed else None,
            warnings=list(result.warnings), verdict=verdict,
            verify=None if verification is None else verification.record(),
            reason=(result.message or result.exit_status) if ended_early else None,
            previous=self.state.instances[instance_id].previous)
        if result.warnings and not interrupted:
            tally.warned.append(instance_id)
        self.output.write_state(self.state)
        self.sink(InstanceFinished(result))
