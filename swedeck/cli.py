"""The `swedeck` command (SPEC §2).

Each subcommand lives in `swedeck/commands/<name>.py` as `run(args) -> exit code` and is
imported only when it is used, so `swedeck config show` never pays for Textual or litellm.

Exit codes: 0 done, 1 runtime error, 2 usage or config error, 3 a limit was reached,
130 interrupted. Errors are one message on stderr; `--debug` or `SWEDECK_DEBUG=1` adds the
traceback.
"""

from __future__ import annotations

import argparse
import atexit
import importlib
import os
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from swedeck.core.startup import holds as start_holds

from . import __version__

EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # exit 2 with one line, as argparse does, but named
        self.print_usage(sys.stderr)
        self.exit(2, f"swedeck: error: {message}\n")


def _config_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c", "--config", action="append", default=[], metavar="NAME|PATH|key.path=value",
        help="a shipped config name, a YAML file, or an override; repeatable, applied in order",
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of `command` alone (what `main` runs: argparse
    builds a subcommand's parser in about a millisecond, and there are ten of them)."""
    parser = _Parser(
        prog="swedeck",
        description="A terminal UI for interactive coding-agent sessions: watch, steer, replay.",
        epilog="Without a subcommand, swedeck starts a live session (`swedeck run`).",
    )
    parser.add_argument("--version", action="version", version=f"swedeck {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, add in _ADD.items():
        if command in (None, name):
            add(sub)
    return parser


def _add_run(sub: argparse._SubParsersAction[_Parser]) -> None:
    run = sub.add_parser("run", help="start a live session (the default)")
    run.add_argument("task", nargs="?", help="the task; asked for in the UI when missing")
    run.add_argument("-t", "--task", dest="task_option", metavar="TEXT", help="the task")
    run.add_argument("--task-file", metavar="PATH", help="read the task from a file")
    _config_options(run)
    run.add_argument("-m", "--model", metavar="NAME", help="litellm model string, or replay:PATH")
    run.add_argument("--env", choices=["local", "docker"], help="where commands run")
    run.add_argument("--image", metavar="IMAGE", help="docker image")
    run.add_argument("--cwd", metavar="DIR", help="working directory of the commands")
    run.add_argument("--mode", choices=["confirm", "yolo", "human"], help="confirm (default), yolo or human")
    run.add_argument("-y", "--yolo", action="store_true", help="same as --mode yolo")
    run.add_argument("-o", "--output", metavar="PATH", help="trajectory path")
    run.add_argument("--resume", metavar="PATH", help="continue a saved or crashed session")
    run.add_argument("--step-limit", type=int, metavar="N", help="stop after N model calls (agent.step_limit; 0: none)")
    run.add_argument("--cost-limit", type=float, metavar="X",
                     help="stop once the model calls cost X dollars (agent.cost_limit; 0: none)")
    run.add_argument("--theme", metavar="NAME", help="the UI's colours: a shipped theme or one in your themes folder "
                                                     "(ui.theme; swedeck config path shows where)")
    run.add_argument("--headless", action="store_true", help="no UI: progress lines on stdout; implies yolo")
    run.add_argument("--json", action="store_true", help="with --headless: JSON events, one per line")
    run.add_argument("--exit-immediately", action="store_true", help="do not ask for a follow-up task")
    run.add_argument("--replay-actions", action="store_true", help=argparse.SUPPRESS)
    run.add_argument("--acp", metavar="AGENT", help="drive an ACP agent: claude-code, codex, or its command "
                     "(docs/acp.md; with --headless for now)")
    run.add_argument("--upstream", metavar="URL", help="with --acp: where its model requests go (default: the provider's)")


def _add_batch(sub: argparse._SubParsersAction[_Parser]) -> None:
    batch = sub.add_parser("batch", help="one headless session per instance of a dataset (SWE-bench or tasks)",
                           description="Run the agent over a dataset, one headless session per instance, "
                                       "and write SWE-bench predictions (docs/batch.md).")
    batch.add_argument("instances", metavar="INSTANCES",
                       help="a .json/.jsonl file of instances, a .txt file of tasks, or a Hugging Face dataset name")
    batch.add_argument("-o", "--output", required=True, metavar="DIR", help="the output folder")
    batch.add_argument("--split", default="test", help="the dataset split (Hugging Face datasets; default test)")
    batch.add_argument("--filter", default="", metavar="RE", help="instance ids matching this regex (from the start)")
    batch.add_argument("--slice", default="", metavar="A:B", help="a slice of the instances, e.g. 0:10")
    batch.add_argument("--shuffle", action="store_true", help="shuffle (seed 42) before --filter and --slice")
    batch.add_argument("-w", "--workers", type=int, default=1, metavar="N", help="instances at a time (default 1)")
    batch.add_argument("--executor", choices=["local", "ray"], default="local",
                       help="threads here (default) or Ray tasks on a cluster")
    batch.add_argument("--address", metavar="ADDR", help="with --executor ray: the cluster (default: start one here)")
    batch.add_argument("--redo", action="store_true", help="run instances that already have a prediction again")
    batch.add_argument("--rerun", metavar="CLASSES", default="",
                       help="run again the finished instances of these classes, e.g. infra,agent-error")
    batch.add_argument("--no-verify", action="store_true",
                       help="grade no instance (the instances' `verify` and batch.verify are not run)")
    batch.add_argument("--verify-on-host", action="store_true",
                       help="with --env local: let the dataset's verify commands run on this machine, as you, for "
                            "this batch (they come from the dataset: by default they run only in a container)")
    batch.add_argument("--grade-only", action="store_true",
                       help="run no agent: grade the finished instances in -o again, each in a fresh environment")
    batch.add_argument("-m", "--model", metavar="NAME", help="litellm model string")
    batch.add_argument("--env", choices=["local", "docker"], help="where commands run (default docker)")
    batch.add_argument("--image", metavar="IMAGE", help="docker image for instances that name none")
    batch.add_argument("--cwd", metavar="DIR", help="working directory for instances that name none")
    batch.add_argument("--step-limit", type=int, metavar="N", help="per instance")
    batch.add_argument("--cost-limit", type=float, metavar="X", help="per instance, in dollars")
    batch.add_argument("--wall-time-limit", type=float, metavar="S", help="per instance, in seconds")
    batch.add_argument("--total-cost-limit", type=float, default=0.0, metavar="X",
                       help="for the whole batch, in dollars: once reached, no instance starts")
    batch.add_argument("--json", action="store_true", help="JSON events, one per line")
    _config_options(batch)


def _add_replay(sub: argparse._SubParsersAction[_Parser]) -> None:
    replay = sub.add_parser("replay", help="open a saved trajectory (or a folder of them)")
    replay.add_argument("path", metavar="PATH")
    replay.add_argument("--step", type=int, metavar="N", help="start at step N (negative counts from the end)")
    replay.add_argument("--follow", action="store_true", help="tail a growing .traj.jsonl")
    replay.add_argument("--play", action="store_true", help="re-animate the recorded stream")
    replay.add_argument("--replay-actions", action="store_true", help="with f (fork): re-run the earlier steps' commands first; they come from the file, "
                        "so they are untrusted: in confirm mode each is shown and asked like a model's")
    replay.add_argument("-m", "--model", metavar="NAME", help="with f (fork): the model that continues the session")
    replay.add_argument("--trust-trajectory", action="store_true",
                        help="with t: run a custom_filter the file records (by default it is shown, not run)")
    replay.add_argument("--print", dest="print_steps", action="store_true", help="print the steps, no UI")
    replay.add_argument("--json", action="store_true", help="with --print: JSON lines")
    _config_options(replay)
    replay.add_argument("--theme", metavar="NAME")


def _add_prompt(sub: argparse._SubParsersAction[_Parser]) -> None:
    prompt = sub.add_parser("prompt", help="print what the model gets at a step, after processors")
    prompt.add_argument("path", metavar="PATH")
    prompt.add_argument("--step", type=int, required=True, metavar="N")
    _config_options(prompt)
    how = prompt.add_mutually_exclusive_group()
    how.add_argument("--json", action="store_true")
    how.add_argument("--wire", action="store_true",
                     help="the request's body as the agent sent it (a record's; Claude Code's rebuilt), as JSON")
    prompt.add_argument("--trust-trajectory", action="store_true",
                        help="run a custom_filter the file records (by default a file never names code to run)")


def _add_export(sub: argparse._SubParsersAction[_Parser]) -> None:
    export = sub.add_parser("export", help="write any trajectory as ATIF or as one offline HTML page")
    export.add_argument("path", metavar="PATH", help="a trajectory of any format swedeck reads (PATH#N: one run of several)")
    export.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write (.html: a page)")
    export.add_argument("--format", choices=["atif", "html"], help="atif (ATIF v1.7 JSON) or html; default: by OUT's suffix")
    export.add_argument("--step", metavar="A:B", help="only steps A to B (1-based; :B, A:, negative from the end)")
    export.add_argument("--json", action="store_true", help="print the report (output, steps, losses) as JSON")
    _config_options(export)


def _add_diff(sub: argparse._SubParsersAction[_Parser]) -> None:
    diff = sub.add_parser("diff", help="runs aligned step by step, where they first part and why")
    diff.add_argument("runs", metavar="RUN", nargs="+",
                      help="two or more trajectories of any format (the first is the reference), or batch folders")
    diff.add_argument("--print", action="store_true", help="print the alignment instead of opening the view")
    diff.add_argument("--json", action="store_true", help="print JSON lines: the runs' totals and every pair's first "
                                                          "divergence with its class, then the rows")
    diff.add_argument("--html", metavar="OUT", help="write the runs compared as one offline HTML page: their totals, "
                                                    "where each pair parted and why, the aligned steps")
    diff.add_argument("-m", "--model", metavar="NAME", help="the model a fork (f, F) continues with")
    _config_options(diff)
    diff.add_argument("--theme", metavar="NAME")


def _add_watch(sub: argparse._SubParsersAction[_Parser]) -> None:
    watch = sub.add_parser("watch", help="live table of the trajectories under a folder")
    watch.add_argument("dir", metavar="DIR")
    watch.add_argument("--stale-after", type=float, default=60.0, metavar="S",
                       help="a .traj.jsonl unchanged this long (seconds) with no .traj.json is stale")
    _config_options(watch)
    watch.add_argument("--theme", metavar="NAME")


def _add_record(sub: argparse._SubParsersAction[_Parser]) -> None:
    record = sub.add_parser("record", help="run any agent with a recording endpoint between it and its provider")
    record.add_argument("-o", "--output", metavar="OUT",
                        help="the record (OUT.traj.jsonl while the agent runs, OUT.traj.json at the end)")
    record.add_argument("--upstream", metavar="URL",
                        help="where the requests go (default: each wire format's provider; a local server, a gateway)")
    record.add_argument("--headless", "--no-ui", action="store_true",
                        help="no live view (the agent keeps the terminal; follow the record with replay --follow)")
    record.add_argument("--print-config", metavar="AGENT", choices=("codex", "claude", "mini-swe-agent"),
                        help="what an agent needs to reach the endpoint beyond the variables swedeck sets")
    record.add_argument("--attach", metavar="OUT",
                        help="from a second terminal: follow the record OUT (a running one live) in swedeck's layout")
    _config_options(record)
    record.add_argument("--theme", metavar="NAME")
    record.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]",
                        help="the agent's command; {endpoint} in it becomes the endpoint's URL")


def _add_rules(sub: argparse._SubParsersAction[_Parser]) -> None:
    rules = sub.add_parser("rules", help="approval rules of Claude Code, Codex, Gemini CLI, OpenCode: check, dry-run")
    rules_sub = rules.add_subparsers(dest="rules_command", metavar="ACTION", parser_class=_Parser)
    check = rules_sub.add_parser("check", help="the decision for one command, part by part, and the rule behind each")
    check.add_argument("--rules", metavar="FILE", action="append", default=[],
                       help="a rule file (repeatable): .rules (Codex), .toml (Gemini CLI), settings.json "
                            "(Claude Code), opencode.json")
    check.add_argument("--from", dest="owner", metavar="OWNER", choices=("claude", "codex", "gemini", "opencode"),
                       help="whose semantics (and, without --rules, whose own files)")
    check.add_argument("--json", action="store_true", help="the verdict as JSON")
    check.add_argument("command_words", nargs=argparse.REMAINDER, metavar="-- COMMAND")
    dry = rules_sub.add_parser("dry-run", help="what the rules would have decided over recorded runs")
    dry.add_argument("rules", metavar="RULES", help="a rule file, or claude|codex|gemini|opencode (their own files)")
    dry.add_argument("paths", nargs="+", metavar="PATH", help="trajectories of any format, folders, batch folders")
    dry.add_argument("--from", dest="owner", metavar="OWNER", choices=("claude", "codex", "gemini", "opencode"))
    dry.add_argument("--json", action="store_true", help="the counts and the commands as JSON")
    dry.add_argument("--limit", type=int, default=40, metavar="N", help="commands listed per decision (default 40)")


def _add_demo(sub: argparse._SubParsersAction[_Parser]) -> None:
    demo = sub.add_parser("demo", help="an offline demo session, no API key needed")
    demo.add_argument("--model", metavar="NAME", help="run the demo task with a real model instead")
    demo.add_argument("--theme", metavar="NAME")
    _config_options(demo)


def _add_config(sub: argparse._SubParsersAction[_Parser]) -> None:
    config = sub.add_parser("config", help="show the resolved configuration or its path")
    config_sub = config.add_subparsers(dest="config_command", metavar="ACTION", parser_class=_Parser)
    show = config_sub.add_parser("show", help="the resolved config as YAML (secrets masked)")
    _config_options(show)
    config_sub.add_parser("path", help="where the user config, themes and data live")


def _add_context_window(sub: argparse._SubParsersAction[_Parser]) -> None:
    window = sub.add_parser("context-window", help="the context window swedeck assumes for a model")
    window.add_argument("model", metavar="MODEL")
    _config_options(window)


_ADD = {
    "run": _add_run,
    "batch": _add_batch,
    "replay": _add_replay,
    "prompt": _add_prompt,
    "export": _add_export,
    "diff": _add_diff,
    "watch": _add_watch,
    "record": _add_record,
    "rules": _add_rules,
    "demo": _add_demo,
    "config": _add_config,
    "context-window": _add_context_window,
}
"""Each subcommand's arguments, in the order `swedeck --help` lists them."""
SUBCOMMANDS = tuple(_ADD)


def _with_default_command(argv: list[str]) -> list[str]:
    """`swedeck [run options]` means `swedeck run [run options]`."""
    if argv and (argv[0] in SUBCOMMANDS or argv[0] in ("-h", "--help", "--version")):
        return argv
    if argv and argv[0] == "--debug":
        return ["--debug", *_with_default_command(argv[1:])]
    return ["run", *argv]


PLUGIN_HOLD_COMMANDS = ("replay", "diff", "watch")
"""The UI commands that start no child process before their first frame (core/startup/holds.py)."""


def _shows_ui(args: argparse.Namespace) -> bool:
    """Whether the command opens a full-screen app (the flags that make it print instead are
    the parser's, above)."""
    return {"demo": True, "watch": True, "run": not getattr(args, "headless", False),
            "replay": not getattr(args, "print_steps", False),
            "diff": not (getattr(args, "print", False) or getattr(args, "json", False)),
            "record": bool(getattr(args, "attach", None))}.get(args.command, False)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = _with_default_command(list(sys.argv[1:] if argv is None else argv))
    command = next((arg for arg in args_list if not arg.startswith("-")), None)  # the top options take no value
    args = build_parser(command if command in SUBCOMMANDS else None).parse_args(args_list)
    if _shows_ui(args):  # until the app's first frame (tui/first_frame.py): bench B2, B3
        start_holds.hold(plugins=args.command in PLUGIN_HOLD_COMMANDS)
    try:
        return _dispatch(args)
    finally:
        start_holds.release()  # a command that ended, or failed, before its first frame


def _dispatch(args: argparse.Namespace) -> int:
    debug = args.debug or os.environ.get("SWEDECK_DEBUG", "") not in ("", "0")
    if args.command == "config" and not args.config_command:
        build_parser().parse_args(["config", "--help"])
    if args.command == "rules" and not args.rules_command:
        build_parser().parse_args(["rules", "--help"])
    module = importlib.import_module(f"swedeck.commands.{args.command.replace('-', '_')}")
    try:
        code = module.run(args)
    except KeyboardInterrupt:
        print("swedeck: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - one message, no traceback, unless asked
        from swedeck.core.errors import SwedeckError

        if debug:
            traceback.print_exc()
        from swedeck.core.text import strip_control

        # an error names paths and values from the command line and from files: never a control to the terminal
        if isinstance(exc, SwedeckError):
            print(strip_control(f"swedeck: {exc}"), file=sys.stderr)
            return exc.exit_code
        print(strip_control(f"swedeck: internal error: {type(exc).__name__}: {exc}"), file=sys.stderr)
        if not debug:
            print("(run with --debug or SWEDECK_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1
    return int(code or 0)


_exit_code = 1
"""What the program exits with (`entry` sets it), for `_leave`."""


def entry() -> NoReturn:
    """The `swedeck` program (its console script and `python -m swedeck`): `main`, then its exit."""
    global _exit_code
    atexit.register(_leave)  # registered first: it runs after the exit handlers registered later
    for stream in (sys.stdout, sys.stderr):  # a file's lone surrogate prints as `\udfff`, never an error
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    if not sys.stdout.isatty():  # a pipe whose reader leaves (`| head -1`) ends the output, not the command
        sys.stdout = _ReaderMayLeave(sys.stdout)
    try:
        sys.exit(main())
    except SystemExit as leaving:
        code = leaving.code
        _exit_code = code if isinstance(code, int) else 0 if code is None else 1  # a text: printed, exit 1
        raise
    except KeyboardInterrupt:  # before a command took over its Ctrl+C
        _exit_code = EXIT_INTERRUPTED
        raise


class _ReaderMayLeave:
    """Standard output to a pipe: once its reader has left (EPIPE), what is left to print goes
    nowhere and the command ends as it would have, with its own exit code (no "internal error:
    BrokenPipeError"); its writes are otherwise the stream's own."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._gone = False

    def write(self, text: str) -> int:
        if not self._gone:
            try:
                return int(self._stream.write(text))
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self._gone = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())  # the interpreter's own last flush meets no closed pipe
        os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _leave() -> None:
    """The program's last exit handler: while a daemon thread still runs, leave now rather than
    let the interpreter finalize.

    A run can end while a thread is inside litellm's import (the context-window look-up of a
    session begins it in the background, and it takes seconds) or a model call. Python 3.11
    stops such a thread where it stands when it next asks for the GIL, and a thread stopped
    inside pydantic-core's Rust code (litellm builds hundreds of models as it imports) takes
    the process down with it (SIGSEGV or SIGABRT) after the run's work is done and its exit
    code chosen. The exit handlers registered after this one (a container's removal,
    temporary folders) have run; logging and the standard streams are flushed here."""
    if not any(thread.daemon and thread.is_alive() for thread in threading.enumerate()):
        return
    if "logging" in sys.modules:
        sys.modules["logging"].shutdown()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # closed, or a pipe whose reader left
            pass
    os._exit(_exit_code)


if __name__ == "__main__":
    entry()
