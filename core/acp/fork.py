"""A fork of an ACP session (SPEC §19): the agent's own session, loaded with `session/load`.

An ACP agent keeps its session's history itself; a client can ask it to load a session by id
(where the agent offers `loadSession`), not to load part of one. So a record of an ACP session
forks only at its last step, into a new ACP session of the same agent that continues the
recorded one (a new record; the agent replays its history as it loads, which swedeck counts
and does not show as new steps). At an earlier step, or with an agent that cannot load, the
fork says why instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ..trajectory.model import Trajectory, TrajectoryInfo


@dataclass(frozen=True)
class AcpResume:
    agent: str
    """The `--acp` value the recorded session ran with (a preset or a command line)."""
    session_id: str
    cwd: str | None
    upstream: str | None


def is_acp_record(info: TrajectoryInfo) -> bool:
    """A record of an ACP session (`swedeck run --acp`), from its header alone."""
    return isinstance(info.session.get("acp"), dict)


def acp_session_of(trajectory: Trajectory) -> dict[str, Any] | None:
    """The record's `acp_session` event, when it is a record of an ACP session."""
    return next((event.data for event in trajectory.meta_events if event.event == "acp_session"), None)


def acp_resume(trajectory: Trajectory, step: int) -> AcpResume | None:
    """How to continue an ACP record from `step`; None when it is not an ACP record. Raises
    `UsageError`, saying why, when it cannot be continued there."""
    session = acp_session_of(trajectory)
    if session is None:
        return None
    acp = trajectory.info.session.get("acp") or {}
    agent = str(acp.get("agent") or session.get("agent") or "")
    last = len(trajectory.steps)
    if not session.get("load_session"):
        raise UsageError(f"this is a session of the ACP agent {agent or '?'}, which cannot load a session "
                         "(no loadSession): it cannot be forked")
    if step < last:
        raise UsageError(f"this is a session of the ACP agent {agent}: an ACP agent loads a whole session, not "
                         f"part of one, so it forks only at its last step ({last}), not at step {step}")
    if not agent or not session.get("session_id"):
        raise UsageError("this ACP record does not name its agent or its session: it cannot be forked")
    return AcpResume(agent, str(session["session_id"]), acp.get("cwd"), acp.get("upstream"))
