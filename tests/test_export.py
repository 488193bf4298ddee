"""`swedeck export` (SPEC §16): any trajectory as ATIF v1.7, checked by Harbor's own validator
and models, and round-tripped through our reader; and as one offline HTML page, opened in a
real headless Chromium with the network cut: it shows the steps, moves with the keys,
searches, makes no request, and runs nothing a hostile run wrote."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from test_owner_readers import oracle

from conftest import swedeck_command
from support.browser import Browser, press
from swedeck.core.export.atif import to_atif
from swedeck.core.export.share import export
from swedeck.core.trajectory.loader import load_trajectory, trajectory_files

FIXTURES = Path(__file__).parent / "fixtures"
SOURCES = [path for path in trajectory_files(FIXTURES) if load_trajectory(path).steps]
MINI = FIXTURES / "mini-v1-text.traj.json"
CLAUDE = FIXTURES / "agents" / "claude-code" / "cc-session-1.jsonl"


def _observations(trajectory) -> list[list[str]]:
    return [[trajectory.messages[i].text for i in step.observation_indices] for step in trajectory.steps]


def _usage(trajectory) -> list[tuple[int, int] | None]:
    return [(step.usage.prompt_tokens, step.usage.completion_tokens) if step.usage and not step.usage.estimated
            else None for step in trajectory.steps]


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.relative_to(FIXTURES).as_posix())
def test_atif_export_passes_harbors_validator_and_round_trips(path, tmp_path):
    validator = oracle("harbor.utils.trajectory_validator")
    models = oracle("harbor.models.trajectories")
    source = load_trajectory(path)
    document = to_atif(source).document
    assert document["schema_version"] == "ATIF-v1.7"
    checker = validator.TrajectoryValidator()
    assert checker.validate(json.loads(json.dumps(document))), checker.get_errors()
    theirs = models.Trajectory.model_validate(document)
    assert sum(1 for step in theirs.steps if step.source == "agent") == len(source.steps)
    written = tmp_path / "run.atif.json"
    written.write_text(json.dumps(document))
    back = load_trajectory(written)
    assert back.format == "atif"
    assert [step.commands for step in back.steps] == [step.commands for step in source.steps]
    assert _observations(back) == _observations(source)
    assert _usage(back) == _usage(source)


def test_atif_keeps_the_submission_byte_for_byte_and_says_what_it_cannot_hold(tmp_path):
    source = load_trajectory(write_hostile_run(tmp_path / "run.traj.json", "ghp_" + "x" * 36))
    result = to_atif(source)
    extra = result.document["extra"]["swedeck"]
    assert extra["submission"] == source.info.submission == "diff\n+key = 'ghp_" + "x" * 36 + "'\n"
    assert extra["exit_status"] == "Submitted"
    assert any(loss.startswith("commands the model wrote in its text") for loss in result.losses)
    first = result.document["steps"][2]
    assert first["tool_calls"][0]["extra"] == {"swedeck": {"from_text": True}}
    assert first["observation"]["results"][0]["source_call_id"] == first["tool_calls"][0]["tool_call_id"]


def test_export_command_writes_the_file_and_reports_losses(tmp_path):
    out = tmp_path / "run.json"
    done = subprocess.run([*swedeck_command(), "export", str(MINI), "-o", str(out), "--step", "2:3", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["format"] == "atif" and report["version"] == "ATIF-v1.7" and report["steps"] == 2
    assert "steps before the range (left out): 1" in report["losses"]
    document = json.loads(out.read_text())
    assert [step["source"] for step in document["steps"]][:2] == ["system", "user"]  # the prefix of every query
    assert sum(1 for step in document["steps"] if step["source"] == "agent") == 2
    text = subprocess.run([*swedeck_command(), "export", str(MINI), "-o", str(tmp_path / "page.html")],
                          capture_output=True, text=True, timeout=60)
    assert text.returncode == 0 and "swedeck-html/1" in text.stdout and (tmp_path / "page.html").stat().st_size > 0
    assert not list(tmp_path.glob(".*.tmp"))  # written whole, through a temporary file


@pytest.mark.parametrize("args,message", [
    (["--step", "9:2"], "--step 9:2: the trajectory has steps 1..8"),
    (["--step", "x"], "--step x: give A:B"),
    (["--format", "pdf"], "invalid choice: 'pdf'"),
])
def test_export_refuses_bad_input_in_one_line(tmp_path, args, message):
    done = subprocess.run([*swedeck_command(), "export", str(MINI), "-o", str(tmp_path / "x.json"), *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "x.json").exists()


def test_export_never_writes_over_the_run_it_exports(tmp_path):
    copy = tmp_path / "run.traj.json"
    copy.write_bytes(MINI.read_bytes())
    done = subprocess.run([*swedeck_command(), "export", str(copy), "-o", str(copy)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2 and "never overwritten" in done.stderr
    assert copy.read_bytes() == MINI.read_bytes()


# --- the page ---------------------------------------------------------------------------------

HOSTILE = [
    "<script>window.__pwned = 1</script>",
    "</script><script>window.__pwned = 2</script>",
    '<img src="https://example.com/x.png" onerror="window.__pwned = 3">',
    '<a href="javascript:window.__pwned = 4">click</a>',
    "&lt;b&gt; &amp; &#60;i&#62;",
    "\x1b]0;owned title\x07 \x1b]52;c;ZWNobyBoaQ==\x07 \x1b[31mred\x1b[0m",
    "\u202egnp.exe",
]


def write_hostile_run(path: Path, secret: str) -> Path:
    """A mini-swe-agent run whose every text tries to become markup, script or a request."""
    evil = "\n".join(HOSTILE)
    messages = [
        {"role": "system", "content": "You are a shell agent."},
        {"role": "user", "content": "Task: " + evil},
        {"role": "assistant", "content": f"THOUGHT: {evil}\n\n```bash\necho '<script>window.__pwned = 5</script>'\n```"},
        {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{evil}\ntoken {secret}\n</output>"},
        {"role": "assistant", "content": "THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n\n</output>"},
    ]
    path.write_text(json.dumps({"info": {"exit_status": "Submitted", "submission": f"diff\n+key = '{secret}'\n"},
                                "messages": messages, "trajectory_format": "mini-swe-agent-1"}))
    return path


@pytest.fixture
def browser():
    chromium = Browser()
    try:
        yield chromium
    finally:
        chromium.close()


def _page(tmp_path: Path, source: Path) -> Path:
    out = tmp_path / "page.html"
    out.write_bytes(export(source, "html").data)
    return out


def test_the_page_shows_steps_moves_with_keys_and_searches_offline(tmp_path, browser):
    page = _page(tmp_path, CLAUDE)
    browser.open(page)
    assert browser.text("step-title") == "step 1 / 5"
    assert browser.evaluate("document.querySelectorAll('#steps li').length") == 5
    assert "format: claude-code" in browser.text("fidelity")
    assert "context" in browser.text("meter") and "prompt reconstructed" in browser.text("meter")
    # issue 65: each step priced from its usage, as `replay --print --json` prices it
    printed = subprocess.run([*swedeck_command(), "replay", str(CLAUDE), "--print", "--json"], capture_output=True,
                             text=True, timeout=60).stdout.splitlines()
    dollars = [json.loads(line)["cost_usd"] for line in printed[1:]]
    assert f"${dollars[0]:.4f} this step · ${dollars[0]:.4f} so far" in browser.text("meter")
    assert f"cost: ${sum(dollars):.4f}" in browser.text("fidelity")
    assert browser.evaluate("document.querySelectorAll('#curve polyline').length") == 1
    assert "tokens" in browser.evaluate("document.getElementById('curve').textContent")  # the axis says what it counts
    press(browser, "ArrowRight")
    browser.wait_for("document.getElementById('step-title').textContent === 'step 2 / 5'")
    press(browser, "End")
    browser.wait_for("document.getElementById('step-title').textContent === 'step 5 / 5'")
    press(browser, "ArrowLeft")
    browser.wait_for("document.getElementById('step-title').textContent === 'step 4 / 5'")
    press(browser, "/")
    browser.wait_for("document.activeElement === document.getElementById('search')")
    browser.type("1 failed")
    browser.wait_for("document.getElementById('search-count').textContent === '1 steps match'")
    assert browser.text("step-title") == "step 2 / 5"  # moved to the match
    assert browser.evaluate("document.querySelectorAll('#output mark').length") >= 1
    assert [url for url in browser.requests if not url.startswith("file://")] == []
    assert browser.errors == []


def test_a_hostile_run_runs_no_script_and_shows_its_text(tmp_path, browser):
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    page = _page(tmp_path, write_hostile_run(tmp_path / "evil.traj.json", secret))
    raw = page.read_text()
    assert raw.count("<script") == 2 and "window.__pwned" not in raw.split('id="run-data">')[0]
    assert secret not in raw
    browser.open(page)
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    thought = browser.text("thought")
    for text in ("<script>window.__pwned = 1</script>", '<a href="javascript:window.__pwned = 4">',
                 "&lt;b&gt; &amp; &#60;i&#62;", "␛]0;owned title␇", "⟨U+202E⟩gnp.exe"):
        assert text in thought
    assert browser.evaluate("document.querySelectorAll('#step img, #step a, #step script').length") == 0
    assert browser.evaluate("document.title").startswith("swedeck · evil.traj.json")
    assert "***" in browser.text("output") or "ghp_***" in browser.text("output")
    assert not browser.evaluate("document.getElementById('notice').hidden")  # the patch shown is not the run's
    press(browser, "End")
    browser.wait_for("document.getElementById('step-title').textContent === 'step 2 / 2'")
    assert browser.evaluate("typeof window.__pwned") == "undefined"
    assert [url for url in browser.requests if not url.startswith("file://")] == []
    assert browser.errors == []


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_x_in_replay_exports_the_open_file(tmp_path):
    from test_replay_ui import screen_of, text_of
    from textual.widgets import Input

    from support.waiting import wait_for
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.shared.ask_screen import AskScreen

    out = tmp_path / "shared.html"
    app = ReplayApp([CLAUDE])
    async with app.run_test(size=(120, 36)) as pilot:
        screen = screen_of(app)
        await wait_for(pilot, lambda: "step 1/5" in text_of(screen, "#replay-header"))
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, AskScreen))
        field = app.screen.query_one(Input)
        assert field.value == "cc-session-1.atif.json"  # ATIF unless the name says .html
        field.value = str(out)
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("wrote" in str(n.message) for n in app._notifications), timeout=30)
        assert out.read_bytes() == export(CLAUDE, "html").data
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, AskScreen))
        app.screen.query_one(Input).value = str(CLAUDE)  # over the run itself: refused, and said
        await pilot.press("enter")
        await wait_for(pilot, lambda: any("export failed" in str(n.message) and "never overwritten" in str(n.message)
                                          for n in app._notifications), timeout=30)
        assert load_trajectory(CLAUDE).steps


def _answers(trajectory) -> list[list[tuple[str, str]]]:
    from swedeck.core.trajectory.output import answer_text

    return [[(trajectory.messages[i].message_type.value, answer_text(trajectory.messages[i]))
             for i in step.observation_indices] for step in trajectory.steps]


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.relative_to(FIXTURES).as_posix())
def test_the_atif_round_trip_keeps_what_each_answer_was_and_its_output(path, tmp_path):
    """Read back, every answer is what it was (a submission, the person's words, mini-swe-agent's
    `exit`) with the output the output pane shows, and `diff` of a run against its own export
    marks no output as different (issue 43.6); the person's later words are `user` steps, not
    results of the step before them (issue 43.5)."""
    from swedeck.core.diff.align import align
    from swedeck.core.messages import MessageType

    source = load_trajectory(path)
    document = to_atif(source).document
    written = tmp_path / "run.atif.json"
    written.write_text(json.dumps(document))
    back = load_trajectory(written)
    assert _answers(back) == _answers(source)
    rows = align(source, back).rows
    assert all(row.kind == "same" and not row.output_differs for row in rows), rows
    person = sum(1 for step in source.steps for i in step.observation_indices
                 if source.messages[i].role == "user" and source.messages[i].message_type in
                 (MessageType.USER_MESSAGE, MessageType.TASK, MessageType.INTERRUPT))
    results = [result for step in document["steps"] for result in (step.get("observation") or {}).get("results", [])]
    assert not any(result.get("extra", {}).get("swedeck", {}).get("message_type") in ("user_message", "task")
                   and "source_call_id" not in result for result in results)
    user_steps = [step for step in document["steps"] if step["source"] == "user"]
    assert len(user_steps) >= 1 + person


def test_a_run_diffed_against_harbors_atif_of_it_has_the_same_outputs():
    """Harbor 0.25.0's own converter of mini-swe-agent's file (its output is recorded in the
    fixtures: Harbor's module needs Python >= 3.12), read back: the outputs are mini-swe-agent's,
    its `<returncode>` wrapper taken apart as the output pane does (issue 43.6)."""
    from swedeck.core.diff.align import align

    theirs = load_trajectory(FIXTURES / "agents" / "atif" / "harbor-0.25.0-of-mini-v2-tool-calls.json")
    rows = align(load_trajectory(FIXTURES / "mini-v2-tool-calls.traj.json"), theirs).rows
    assert rows and all(row.kind == "same" and not row.output_differs for row in rows), rows


def test_the_persons_later_turns_are_user_steps(tmp_path):
    """A Claude Code session with a second user turn: exported, the turn is a `user` step between
    the agent steps (as Harbor writes one), not a result of the step before it (issue 43.5)."""
    def record(uuid, parent, kind, message):
        return json.dumps({"sessionId": "s", "uuid": uuid, "parentUuid": parent, "type": kind, "message": message})

    lines = [record("u1", None, "user", {"role": "user", "content": "list the files"}),
             record("a1", "u1", "assistant", {"id": "m1", "role": "assistant", "content": [
                 {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}),
             record("r1", "a1", "user", {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "t1", "content": "calc.py"}]}),
             record("a2", "r1", "assistant", {"id": "m2", "role": "assistant", "content": [
                 {"type": "text", "text": "One file."}]}),
             record("u2", "a2", "user", {"role": "user", "content": "now count its lines"}),
             record("a3", "u2", "assistant", {"id": "m3", "role": "assistant", "content": [
                 {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "wc -l calc.py"}}]})]
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    document = to_atif(load_trajectory(path)).document
    assert [(step["source"], step.get("message")) for step in document["steps"]] == [
        ("user", "list the files"), ("agent", ""), ("agent", "One file."), ("user", "now count its lines"), ("agent", "")]
    assert [r["content"] for r in document["steps"][1]["observation"]["results"]] == ["calc.py"]
    assert "observation" not in document["steps"][2]


def _whole_json(document: object) -> bytes:
    """How the export wrote the document whole before it was streamed (issue 49): the reference."""
    return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: path.relative_to(FIXTURES).as_posix())
def test_the_streamed_atif_export_is_the_documents_json_byte_for_byte(path):
    from swedeck.core.export.atif import atif_chunks

    source = load_trajectory(path, lazy=True)
    count = len(source.steps)
    for steps in {(1, count), (min(2, count), count), (1, 1), (count, count)}:
        losses: list[str] = []
        streamed = b"".join(atif_chunks(source, steps, losses))
        whole = to_atif(source, steps)
        assert streamed == _whole_json(whole.document), steps
        assert losses == whole.losses


def test_a_lone_surrogate_is_escaped_in_its_step_and_reads_back_the_same(tmp_path):
    from swedeck.core.export.atif import atif_chunks

    path = tmp_path / "odd.traj.json"
    path.write_text(json.dumps({"messages": [
        {"role": "system", "content": "you are ü"}, {"role": "user", "content": "task \ud800 here ü"},
        {"role": "assistant", "content": "THOUGHT\n```bash\nls\n```"}, {"role": "user", "content": "out ✓"}]}))
    source = load_trajectory(path, lazy=True)
    streamed = b"".join(atif_chunks(source, (1, 1), []))
    assert json.loads(streamed) == to_atif(source).document
    assert "ü".encode() in streamed and b"\\u00fc" in streamed and b"\\ud800" in streamed  # escaped in its step alone


def test_exporting_a_large_run_holds_a_part_of_it_in_memory(tmp_path):
    """The steps are written as they are made (`atif_chunks`, `html_chunks`), from a lazily read run."""
    from bench.generate import write_codex
    from support.measured import peak_of

    rollout = write_codex(tmp_path / "rollout.jsonl", 12000, 6000)
    for out in (tmp_path / "run.atif.json", tmp_path / "run.html"):  # ATIF, and the page
        ran, peak = peak_of([*swedeck_command(), "export", str(rollout), "-o", str(out)])
        assert ran.returncode == 0, ran.stderr
        assert "12000 steps" in ran.stdout
        assert out.stat().st_size > 70e6 and peak < 120, (out.name, peak)  # the output alone is most of that


def test_every_step_of_a_long_run_keeps_its_results():
    """A step's results are found by position: built steps are kept for the latest 1,024 only,
    and the export matched them by identity, so past 1,024 steps every result was dropped."""
    from bench.generate import write_codex

    with tempfile.TemporaryDirectory() as folder:
        rollout = write_codex(Path(folder) / "rollout.jsonl", 1500, 50)
        document = json.loads(export(rollout, "atif").data)
    agents = [step for step in document["steps"] if step["source"] == "agent"]
    assert len(agents) == 1500 and all(len(step["observation"]["results"]) == 1 for step in agents)


def test_an_export_is_shareable_and_a_folder_of_runs_is_a_usage_error(tmp_path):
    """Issue 62: exports were mode 0600 though made to be shared; `swedeck export FOLDER` said
    `Expecting value: line 1 column 1`, exit 1."""
    import os
    import shutil
    import subprocess

    from conftest import swedeck_command

    source = next((Path(__file__).parent / "fixtures").rglob("mini-v1-text.traj.json"))
    for name in ("a", "b"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        shutil.copy(source, tmp_path / "runs" / name / source.name)
    umask = os.umask(0o022)
    try:
        done = subprocess.run([*swedeck_command(), "export", str(source), "-o", str(tmp_path / "run.json")],
                              capture_output=True, text=True, timeout=120)
        folder = subprocess.run([*swedeck_command(), "export", str(tmp_path / "runs"), "-o", str(tmp_path / "x.json")],
                                capture_output=True, text=True, timeout=120)
    finally:
        os.umask(umask)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "run.json").stat().st_mode & 0o777 == 0o644
    assert folder.returncode == 2 and "a folder of runs" in folder.stderr and "runs/a/" in folder.stderr
    assert not (tmp_path / "x.json").exists()
