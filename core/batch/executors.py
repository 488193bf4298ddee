"""Where a batch's instances run: threads of this process (`local`) or Ray tasks (`ray`).

Both give the batch the same three calls: `submit` an instance, `wait` for some to finish,
and `stop` the running ones (they end `Interrupted`, with their final file written).
Ray schedules the tasks over its cluster; swedeck adds no scheduler of its own.
"""

from __future__ import annotations

import concurrent.futures
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from .. import events as ev
from ..config import SwedeckConfig
from ..errors import UsageError
from ..exit_status import ExitStatus
from ..session import Session
from .instance_run import InstanceResult, Prepared, prepare, run_prepared
from .instances import Instance

Handle = Any
OnEvent = Callable[[str, ev.Event], None]
OnSubmitted = Callable[[str, str], None]
"""Called with an instance's id and its submission as soon as its agent submits, before grading."""


def _submitted_first(instance_id: str, on_submitted: OnSubmitted,
                     verifier: Callable[[Any, str], None] | None) -> Callable[[Any, str], None]:
    """The session's `after_agent`: the submission is kept (`preds.json`) before the verifier
    runs, so a kill during grading loses neither the agent's work nor its cost."""
    def after(environment: Any, submission: str) -> None:
        on_submitted(instance_id, submission)
        if verifier is not None:
            verifier(environment, submission)
    return after


class Executor(Protocol):
    def submit(self, instance: Instance, trajectory_base: Path) -> Handle: ...

    def wait(self, handles: list[Handle], timeout: float) -> list[tuple[Handle, InstanceResult]]:
        """The handles that finished within `timeout` seconds, with their results."""

    def stop(self) -> None:
        """End every running instance (`Interrupted`); queued work is the batch's to drop."""

    def close(self) -> None: ...


class LocalExecutor:
    """`--workers N` threads; each instance's session runs in one of them."""

    def __init__(self, config: SwedeckConfig, workers: int, on_event: OnEvent | None = None,
                 on_submitted: OnSubmitted | None = None):
        self.config = config
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="swedeck-batch")
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._on_event = on_event
        self._on_submitted = on_submitted

    def submit(self, instance: Instance, trajectory_base: Path) -> Handle:
        prepared = prepare(self.config, instance, trajectory_base)  # here, so that `stop` reaches it at once
        if self._on_submitted is not None:
            prepared.session.after_agent = _submitted_first(instance.instance_id, self._on_submitted,
                                                            prepared.verifier)
        with self._lock:
            self._sessions[instance.instance_id] = prepared.session
        return self._pool.submit(self._run, prepared, instance.instance_id)

    def _run(self, prepared: Prepared, instance_id: str) -> InstanceResult:
        on_event = self._on_event
        try:
            return run_prepared(prepared, instance_id,
                                (lambda event: on_event(instance_id, event)) if on_event else None)
        finally:
            with self._lock:
                self._sessions.pop(instance_id, None)

    def wait(self, handles: list[Handle], timeout: float) -> list[tuple[Handle, InstanceResult]]:
        done, _ = concurrent.futures.wait(handles, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED)
        return [(handle, handle.result()) for handle in done]

    def stop(self) -> None:
        with self._lock:
            sessions = list(self._sessions.values())
        for session in sessions:
            session.quit(ExitStatus.INTERRUPTED)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


def _ray_task(config_record: dict[str, Any], instance: Instance, trajectory_base: str) -> InstanceResult:
    """One instance in a Ray worker process (which keeps litellm loaded for the next one)."""
    config = SwedeckConfig.model_validate(config_record)
    base = Path(trajectory_base)
    base.parent.mkdir(parents=True, exist_ok=True)
    result = run_prepared(prepare(config, instance, base), instance.instance_id)
    if result.trajectory_path:
        try:
            result.final_trajectory = Path(result.trajectory_path).read_text(encoding="utf-8")
        except OSError:
            pass
    return result


CONNECT_TIMEOUT_S = 10.0


def _check_reachable(address: str) -> None:
    """A `host:port` that nothing answers is said at once (Ray itself keeps retrying for minutes)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # `auto`, `local` and other forms are Ray's to read
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise UsageError(f"--executor ray: cannot connect to {address}: {exc.strerror or exc} "
                         "(is the cluster started, e.g. `ray start --head`?)") from None


class RayExecutor:
    """Instances as Ray tasks on the cluster at `address` (None: a local one, started here).
    Each task runs on a worker node with that node's Docker engine and writes the
    trajectory under the output path as that node sees it; the final file also comes back
    with the result, and the batch writes it where the worker's disk was not the output's."""

    def __init__(self, config: SwedeckConfig, workers: int, address: str | None = None):
        try:
            import ray
        except ImportError:
            raise UsageError("--executor ray needs Ray: pip install 'swedeck[batch]'") from None
        self._ray = ray
        self._started_here = not ray.is_initialized()
        if self._started_here:
            if address:
                _check_reachable(address)
            try:
                ray.init(address=address, num_cpus=None if address else workers, include_dashboard=False,
                         log_to_driver=False)
            except Exception as exc:  # noqa: BLE001 - Ray's connection errors, said in one line
                where = address or "a local Ray cluster"
                raise UsageError(f"--executor ray: cannot connect to {where}: {type(exc).__name__}: {exc}") from None
        self._record = config.model_dump(mode="json")
        self._remote = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
        self._running: set[Any] = set()

    def submit(self, instance: Instance, trajectory_base: Path) -> Handle:
        ref = self._remote.remote(self._record, instance, str(trajectory_base))
        self._running.add(ref)
        return ref

    def wait(self, handles: list[Handle], timeout: float) -> list[tuple[Handle, InstanceResult]]:
        ready, _ = self._ray.wait(handles, num_returns=1, timeout=timeout)
        finished = []
        for ref in ready:
            self._running.discard(ref)
            finished.append((ref, self._result(ref)))
        return finished

    def _result(self, ref: Any) -> InstanceResult:
        try:
            result: InstanceResult = self._ray.get(ref)
            return result
        except self._ray.exceptions.TaskCancelledError:
            return InstanceResult(instance_id="", exit_status=ExitStatus.INTERRUPTED.value, message="cancelled")
        except Exception as exc:  # noqa: BLE001 - a worker that died: that instance failed, the batch goes on
            return InstanceResult(instance_id="", exit_status=type(exc).__name__, message=str(exc).splitlines()[0],
                                  error=str(exc))

    def stop(self) -> None:
        for ref in list(self._running):
            self._ray.cancel(ref)  # KeyboardInterrupt in the task: its session ends Interrupted

    def close(self) -> None:
        if self._started_here:
            self._ray.shutdown()
