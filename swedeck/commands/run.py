"""`swedeck run`: a live session in the UI, or `--headless` without one."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from swedeck.core.config import SwedeckConfig, load_config, require_model
from swedeck.core.errors import UsageError
from swedeck.core.text import strip_control

from . import config_flags


def read_task(args: argparse.Namespace) -> str | None:
    given = [value for value in (args.task, args.task_option) if value]
    if args.task_file:
        try:
            given.append(Path(args.task_file).read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"--task-file {args.task_file}: {exc.strerror or exc}") from None
    if len(given) > 1:
        raise UsageError("give the task once: as an argument, with -t/--task, or with --task-file")
    return given[0].strip() if given else None


def run(args: argparse.Namespace) -> int:
    flags = config_flags(args)
    if args.exit_immediately:
        flags["agent.confirm_exit"] = False
    config = load_config(args.config, flags=flags)
    if args.acp or config.agent.acp.command or (args.resume and _acp_record(args.resume)):
        return run_acp_agent(args, config)
    if args.resume:  # where it ran, as it ran: its folder, environment and image unless given again
        flags.update(_where_it_ran(args))
        config = load_config(args.config, flags=flags)
    task = read_task(args)
    if args.json and not args.headless:
        raise UsageError("--json goes with --headless")
    require_model(config)  # said now, as a usage error: not as a session that failed to start, nor in an opened UI
    if args.resume:
        from swedeck.core.trajectory.loader import named_path

        named_path(args.resume)  # a missing file is a usage error, not "the environment failed"
    if args.headless:
        from swedeck.core.headless import run_headless

        result = run_headless(config, task, as_json=args.json, resume=args.resume)
        if result.exit_code == 2:
            print(strip_control(f"swedeck: {result.message}"), file=sys.stderr)
        return result.exit_code
    from swedeck.tui.live.launch import run_ui  # a broken install says what is missing, as any import error

    return run_ui(config, task, resume=args.resume)


def _where_it_ran(args: argparse.Namespace) -> dict[str, object]:
    """The recorded session's folder, environment and image, for each the command line does not
    give; said on the first line. A folder that is gone is a usage error."""
    from swedeck.core.trajectory.loader import load_trajectory, named_path

    info = load_trajectory(named_path(args.resume)).info
    session = info.session if isinstance(info.session, dict) else {}
    recorded = session.get("config", {}).get("environment", {}) if isinstance(session.get("config"), dict) else {}
    flags: dict[str, object] = {}
    said = []
    if not args.env and isinstance(recorded.get("environment_class"), str):
        flags["environment.environment_class"] = recorded["environment_class"]
    if not args.image and recorded.get("image"):
        flags["environment.image"] = recorded["image"]
    folder = session.get("cwd") or recorded.get("cwd")
    if args.cwd:
        said.append(f"in {args.cwd} (--cwd; the session ran in {folder or 'a folder it did not record'})")
    elif isinstance(folder, str) and folder:
        if (flags.get("environment.environment_class") or "local") == "local" and not Path(folder).is_dir():
            raise UsageError(f"--resume {args.resume}: the session ran in {folder}, which no longer exists "
                             "(give --cwd DIR to resume it elsewhere)")
        flags["environment.cwd"] = folder
        said.append(f"in {folder} (where it ran; --cwd overrides)")
    else:
        said.append("in this folder (the session did not record where it ran; --cwd sets it)")
    print(strip_control(f"swedeck: resuming {args.resume} " + ", ".join(said)), file=sys.stderr, flush=True)
    return flags


def _acp_record(path: str) -> bool:
    from swedeck.core.acp.fork import is_acp_record
    from swedeck.core.trajectory.loader import load_trajectory, named_path

    return is_acp_record(load_trajectory(named_path(path)).info)


def run_acp_agent(args: argparse.Namespace, config: SwedeckConfig) -> int:
    """`swedeck run --acp AGENT [--headless] -t TASK`, or `agent.acp.command` in config (`core/acp/`)."""
    from swedeck.core.acp.presets import agent_command

    spec = args.acp or config.agent.acp.command
    upstream = args.upstream or config.agent.acp.upstream or None
    task = read_task(args)
    cwd = Path(args.cwd) if args.cwd else Path.cwd()
    resume = None
    if args.resume:  # a record of an ACP session: its agent loads the session and goes on (core/acp/fork.py)
        from swedeck.core.acp.fork import acp_resume
        from swedeck.core.trajectory.loader import load_trajectory, named_path

        trajectory = load_trajectory(named_path(args.resume))
        found = acp_resume(trajectory, len(trajectory.steps))
        if found is None:
            raise UsageError(f"--resume {args.resume}: not a record of an ACP session (swedeck run --acp)")
        resume, upstream = found.session_id, upstream or found.upstream
        cwd = Path(args.cwd) if args.cwd else Path(found.cwd or ".")
        if spec != found.agent and args.acp:
            raise UsageError(f"--resume {args.resume}: a session of {found.agent}, not of {spec}")
        spec = found.agent
    agent_command(spec)  # a missing adapter is a usage error now, not a session that fails later
    if not args.headless:  # the live panes (core/acp/session.py)
        from swedeck.core.acp.session import AcpSession
        from swedeck.tui.live.launch import run_session_ui

        return run_session_ui(AcpSession(config, spec, task, cwd=cwd, output=args.output, upstream=upstream,
                                         resume=resume))
    from swedeck.core.acp.run import run_acp

    result = run_acp(spec, task or "", cwd=cwd, output=args.output, upstream=upstream,
                     say=lambda line: print(strip_control(line), flush=True), environment=config.environment,
                     resume=resume, config=config)
    return result.exit_code
