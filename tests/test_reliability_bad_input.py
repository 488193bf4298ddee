"""SPEC §13 R3: bad input never crashes swedeck.

Damaged trajectory files (truncated, a wrong type in any field, binary garbage, a 20 MB
line, empty, a folder, a missing path) give `TrajectoryError` from `load_trajectory` and one
clear line with exit 1 or 2 from `swedeck replay --print` and `swedeck prompt`; an invalid
config exits 2 naming the field; an unknown model gets an unknown window, not a crash.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import MINI_FIXTURE, SWEAGENT_FIXTURE, swedeck_command
from support.driver import Driver, make_config, run_session
from support.openai_server import Turn, Usage, model_config
from support.reliability import SUBMIT, headless_args, swedeck_files
from support.waiting import wait_for
from swedeck.cli import main
from swedeck.core import events as ev
from swedeck.core.context_window import resolve_context_window
from swedeck.core.trajectory.errors import TrajectoryError
from swedeck.core.trajectory.loader import load_trajectory
from swedeck.core.trajectory.model import Trajectory

FUZZ = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, bytes]:
    folder = tmp_path_factory.mktemp("seeds")
    live, final = swedeck_files(folder)
    return {".traj.jsonl": live.read_bytes(), ".traj.json": final.read_bytes(),
            "mini.traj.json": MINI_FIXTURE.read_bytes(), "swe.traj": SWEAGENT_FIXTURE.read_bytes()}


def test_the_seeds_load(seeds, tmp_path):
    for name, data in seeds.items():
        path = tmp_path / f"x{name}"
        path.write_bytes(data)
        assert load_trajectory(path).messages, name


def loads_or_says_why(path: Path) -> None:
    """The property: a Trajectory, or a TrajectoryError naming the file; nothing else."""
    try:
        result = load_trajectory(path)
    except TrajectoryError as error:
        assert str(path) in str(error) and "\n" not in str(error).strip()
    else:
        assert isinstance(result, Trajectory)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def assert_clean_cli(path: Path) -> None:
    for argv in (["replay", str(path), "--print"], ["replay", str(path), "--print", "--json"],
                 ["prompt", str(path), "--step", "1"]):
        code, _, err = cli(*argv)
        assert code in (0, 1, 2), (argv, code, err)
        assert "Traceback" not in err and "internal error" not in err, (argv, err)
        if code:
            assert err.startswith("swedeck: ") and len(err.strip().splitlines()) == 1, (argv, err)


# --- fuzzed files ----------------------------------------------------------------------------

SEED_NAMES = [".traj.jsonl", ".traj.json", "mini.traj.json", "swe.traj"]
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=8,
)


def field_paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key/index path inside a JSON document (bounded: the first items of long lists)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += field_paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value[:6]):
            found += field_paths(inner, (*prefix, index))
    return found


def replaced(document: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, *rest = path
    copy = dict(document) if isinstance(document, dict) else list(document)
    copy[head] = replaced(document[head], tuple(rest), new)
    return copy


def documents(data: bytes, name: str) -> list[Any]:
    if name.endswith("jsonl"):
        return [json.loads(line) for line in data.splitlines() if line.strip()]
    return [json.loads(data)]


def serialize(docs: list[Any], name: str) -> bytes:
    if name.endswith("jsonl"):
        return b"".join(json.dumps(doc).encode() + b"\n" for doc in docs)
    return json.dumps(docs[0]).encode()


@FUZZ
@given(name=st.sampled_from(SEED_NAMES), cut=st.floats(0, 1))
def test_truncated_files(seeds, tmp_path, name, cut):
    data = seeds[name]
    path = tmp_path / f"cut{name}"
    path.write_bytes(data[: int(len(data) * cut)])
    loads_or_says_why(path)


@FUZZ
@given(name=st.sampled_from(SEED_NAMES), data=st.data(), new=JSON_VALUES)
def test_a_wrong_type_in_any_field(seeds, tmp_path, name, data, new):
    docs = documents(seeds[name], name)
    which = data.draw(st.integers(0, len(docs) - 1))
    paths = field_paths(docs[which])
    path_in_doc = data.draw(st.sampled_from(paths)) if paths else ()
    docs[which] = replaced(docs[which], path_in_doc, new)
    path = tmp_path / f"typed{name}"
    path.write_bytes(serialize(docs, name))
    loads_or_says_why(path)


@FUZZ
@given(name=st.sampled_from(SEED_NAMES), garbage=st.binary(max_size=400), at=st.floats(0, 1))
def test_binary_garbage_anywhere(seeds, tmp_path, name, garbage, at):
    data = seeds[name]
    index = int(len(data) * at)
    path = tmp_path / f"garbage{name}"
    path.write_bytes(data[:index] + garbage + data[index:])
    loads_or_says_why(path)


@FUZZ
@given(value=JSON_VALUES)
def test_any_json_document(tmp_path, value):
    path = tmp_path / "any.traj.json"
    path.write_text(json.dumps(value))
    loads_or_says_why(path)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(SEED_NAMES), cut=st.floats(0, 1), garbage=st.binary(max_size=40))
def test_replay_print_and_prompt_never_show_a_traceback(seeds, tmp_path, name, cut, garbage):
    data = seeds[name]
    path = tmp_path / f"cli{name}"
    path.write_bytes(data[: int(len(data) * cut)] + garbage)
    assert_clean_cli(path)


# --- the named cases -------------------------------------------------------------------------


def test_a_20_mb_line(tmp_path, seeds):
    huge = "x" * (20 * 1024 * 1024)
    unterminated = tmp_path / "open.traj.json"
    unterminated.write_text('{"messages": [{"role": "user", "content": "' + huge)
    with pytest.raises(TrajectoryError):
        load_trajectory(unterminated)
    assert_clean_cli(unterminated)
    # a whole message of 20 MB in a live file loads (it is big, not broken)
    lines = seeds[".traj.jsonl"].splitlines()
    record = json.loads(lines[2])
    record["content"] = huge
    big = tmp_path / "big.traj.jsonl"
    big.write_bytes(b"\n".join([*lines, json.dumps(record).encode()]) + b"\n")
    assert load_trajectory(big).messages[-1].content == huge
    # ... and a 20 MB line torn by a kill is skipped with a warning
    torn = tmp_path / "torn.traj.jsonl"
    torn.write_bytes(b"\n".join(lines) + b"\n" + json.dumps(record).encode()[:-100])
    loaded = load_trajectory(torn)
    assert len(loaded.messages) == 4 and loaded.info.warnings


@pytest.mark.parametrize("make", ["empty", "folder", "missing", "binary", "not_a_trajectory"])
def test_named_bad_paths(tmp_path, make):
    path = tmp_path / f"{make}.traj.json"
    if make == "empty":
        path.write_bytes(b"")
    elif make == "folder":
        path.mkdir()
    elif make == "binary":
        path.write_bytes(bytes(range(256)) * 10)
    elif make == "not_a_trajectory":
        path.write_text('{"hello": "world"}')
    with pytest.raises(TrajectoryError) as caught:
        load_trajectory(path)
    assert str(path) in str(caught.value)
    assert_clean_cli(path)


def test_the_real_command_on_a_damaged_file(tmp_path, seeds):
    path = tmp_path / "cut.traj.json"
    path.write_bytes(seeds[".traj.json"][:200])
    for argv in (["replay", str(path), "--print"], ["prompt", str(path), "--step", "1"]):
        result = subprocess.run([*swedeck_command(), *argv], capture_output=True, text=True, timeout=60)
        assert result.returncode == 1, result.stderr
        assert result.stderr.startswith(f"swedeck: cannot read trajectory {path}") and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


# --- configs ---------------------------------------------------------------------------------

BAD_OVERRIDES = {
    "agent.step_limit=-1": "agent.step_limit",
    "agent.mode=fast": "agent.mode",
    "model.retry.attempts=zero": "model.retry.attempts",
    "agent.nope=1": "agent.nope",
    "agent.system_template='{{ x'": "agent.system_template",
    "agent.whitelist_actions=['(']": "agent.whitelist_actions",
    "environment.timeout=0": "environment.timeout",
    "environment.environment_class=podman": "environment.environment_class",
    "agent.history_processors=[{type: bogus}]": "agent.history_processors",
    "agent.history_processors=[{type: last_n_observations, n: -3}]": "agent.history_processors.0",
    "model.usage_fallback=guess": "model.usage_fallback",
}


@pytest.mark.parametrize("override", BAD_OVERRIDES)
def test_an_invalid_override_exits_2_naming_the_field(override):
    code, _, err = cli("config", "show", "-c", override)
    assert code == 2 and BAD_OVERRIDES[override] in err and "Traceback" not in err, err


@pytest.mark.parametrize("text,named", [
    ("agent:\n  step_limit: many\n", "agent.step_limit"),
    ("agent: [1\n", "not valid YAML"),
    ("- 1\n", "must be a mapping"),
    ("model:\n  retry: 3\n", "model.retry"),
    ("environment:\n  env: [a, b]\n", "environment.env"),
    ("agents:\n  mode: yolo\n", "agents"),
])
def test_an_invalid_config_file_exits_2_naming_the_file_and_field(tmp_path, text, named):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    code, _, err = cli("config", "show", "-c", str(path))
    assert code == 2 and named in err and str(path) in err, err


def test_an_invalid_environment_variable_exits_2(monkeypatch):
    monkeypatch.setenv("SWEDECK_AGENT__STEP_LIMIT", "abc")
    code, _, err = cli("config", "show")
    assert code == 2 and "SWEDECK_AGENT__STEP_LIMIT" in err and "agent.step_limit" in err


def test_run_with_an_invalid_config_exits_2_before_anything_starts(tmp_path):
    result = subprocess.run([*swedeck_command(), "run", "--headless", "-m", "x/y", "-c", "agent.cost_limit=cheap",
                             "-o", str(tmp_path / "r.traj.json"), "t"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "agent.cost_limit" in result.stderr and "Traceback" not in result.stderr
    assert not list(tmp_path.iterdir()), "no trajectory for a session that never started"


# --- an unknown model --------------------------------------------------------------------------

UNKNOWN = "hosted_vllm/no-such-model-anyone-knows-7f3a"


def test_an_unknown_model_has_an_unknown_window():
    window = resolve_context_window(UNKNOWN, use_litellm=True)
    assert (window.window, window.source) == (None, "unknown")
    assert ev.ContextStatus(window=None, prompt_tokens=1234, window_source="unknown").left_percent is None
    code, out, err = cli("context-window", UNKNOWN)
    assert code in (0, 1) and "unknown" in (out + err).lower() and "Traceback" not in err


def test_a_session_with_an_unknown_model_completes(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool("echo hi", usage=Usage(100, 5)), Turn.bash_tool(SUBMIT, usage=Usage(150, 5)))
    model = model_config(openai_server, name="no-such-model-anyone-knows-7f3a")
    driver = Driver()
    result = run_session(make_config(tmp_path, model, agent__mode="yolo"), "t", driver, interactive=False)
    assert result.exit_status == "Submitted", result.message
    statuses = [e.status for e in driver.of(ev.ContextUpdated)]
    assert statuses and all(s.window is None and s.left_percent is None for s in statuses)
    assert any(s.prompt_tokens == 100 and s.next_estimate for s in statuses), "the meter still counts tokens"
    saved = json.loads((tmp_path / "session.traj.json").read_text())
    actions = [m for m in saved["messages"] if m["extra"]["message_type"] == "action"]
    assert all(a["extra"]["context"].get("window") is None for a in actions)


def test_headless_with_an_unknown_model_says_so(openai_server, tmp_path):
    openai_server.script(Turn.bash_tool(SUBMIT, usage=Usage(100, 5)))
    result = subprocess.run(headless_args(openai_server.url, tmp_path, "t", model=UNKNOWN), capture_output=True,
                            text=True, timeout=90)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "context window unknown" in result.stdout


def test_a_fifo_or_a_device_named_like_a_trajectory_is_refused_at_once(tmp_path):
    import os

    fifo = tmp_path / "hang.traj.json"
    os.mkfifo(fifo)
    zero = tmp_path / "zero.traj.json"
    zero.symlink_to("/dev/zero")
    for path, reason in ((fifo, "a FIFO"), (zero, "a device")):
        for command in (["replay", str(path), "--print"], ["prompt", str(path), "--step", "1"]):
            done = subprocess.run([*swedeck_command(), *command], capture_output=True, text=True, timeout=60)
            assert done.returncode == 1 and reason in done.stderr and "Traceback" not in done.stderr


@pytest.mark.anyio
async def test_search_passes_over_a_damaged_message_and_the_step_shows_it(tmp_path):
    import json as _json

    from support.replay import add_step, start_writer
    from swedeck.tui.replay.app import ReplayApp

    writer = start_writer(tmp_path / "damaged")
    for step in (1, 2, 3):
        add_step(writer, step, output=f"needle {step}")
    writer.close()
    path = writer.path
    lines = path.read_text().splitlines()
    record = _json.loads(lines[5])  # step 2's assistant message
    record["content"] = {"not": "text"}  # the wrong type
    lines[5] = _json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    app = ReplayApp([path])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen_stack[0]
        screen.search("needle")
        await wait_for(pilot, lambda: not screen.searching, 10)  # the search runs in a worker
        assert screen.matches == [1, 3] and app.is_running
        screen.go(2)
        await pilot.pause()
        assert screen.error and "message" in screen.error  # shown as damaged
        screen.go(3)
        await pilot.pause()
        assert screen.error is None and screen.step == 3


def test_an_alias_bomb_or_a_binary_config_is_one_clear_error(tmp_path):
    levels = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for name, previous in zip("bcdefg", "abcdef", strict=True):
        levels.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(levels) + "\nagent: *g\n")
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(bytes(range(256)))
    for path, reason in ((bomb, "alias bomb"), (binary, "not a text file")):
        done = subprocess.run([*swedeck_command(), "config", "show", "-c", str(path)], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 2 and reason in done.stderr and len(done.stderr) < 500
        assert "internal error" not in done.stderr and "Traceback" not in done.stderr
