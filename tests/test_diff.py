"""`swedeck diff A B` (SPEC §16): real runs against the scripted model server, aligned, and
the first divergence exactly where the second run took another way; the same steps written
in other formats never part."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pytest

from bench.generate import write_jsonl, write_mini_v2, write_sweagent
from conftest import swedeck_command
from support.driver import make_config
from support.isolation import recorded_once
from support.openai_server import OpenAIServer, Turn, model_config
from support.reliability import SUBMIT
from swedeck.core.diff.align import align
from swedeck.core.headless import run_headless
from swedeck.core.trajectory.loader import load_trajectory

TASK = "Make the failing test pass."
COMMON = ["ls", "cat calc.py"]


def run(server, folder: Path, *turns: Turn) -> Path:
    """A real headless session against the scripted server; its final trajectory file."""
    folder.mkdir()
    server.script(*turns)
    config = make_config(folder, model_config(server), agent__mode="yolo")
    result = run_headless(config, TASK, out=io.StringIO())
    assert result.exit_status.value == "Submitted", result
    return Path(config.run.output)


def commands(*names: str) -> list[Turn]:
    return [Turn.bash_tool(name) for name in names]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Path:
    """A's real run, recorded once for the module: the tests only read it."""
    with recorded_once(tmp_path_factory, "baseline") as folder, OpenAIServer() as server:
        return run(server, folder / "a", *commands(*COMMON, "python -m pytest -q", SUBMIT))


@pytest.mark.timeout(120)
def test_runs_that_agree_for_two_steps_part_at_step_three(openai_server, tmp_path, baseline):
    other = run(openai_server, tmp_path / "b", *commands(*COMMON, "sed -i 's/- 1//' calc.py", SUBMIT))
    alignment = align(load_trajectory(baseline), load_trajectory(other))
    assert alignment.first_divergence == 3
    assert [row.kind for row in alignment.rows][:2] == ["same", "same"]
    assert alignment.rows[-1].kind == "same"  # both submit at the end


@pytest.mark.timeout(120)
def test_an_extra_retry_step_is_a_step_only_one_run_took(openai_server, tmp_path, baseline):
    other = run(openai_server, tmp_path / "b", *commands(*COMMON, "cat calc.py", "python -m pytest -q", SUBMIT))
    alignment = align(load_trajectory(baseline), load_trajectory(other))
    assert alignment.first_divergence == 3
    assert [(row.kind, row.a, row.b) for row in alignment.rows] == [
        ("same", 1, 1), ("same", 2, 2), ("b_only", None, 3), ("same", 3, 4), ("same", 4, 5)]


@pytest.mark.timeout(120)
def test_a_format_error_parts_the_runs_where_it_happened(openai_server, tmp_path, baseline):
    other = run(openai_server, tmp_path / "b", Turn.bash_tool("ls"), Turn(text="I will read the file now."),
                *commands("cat calc.py", "python -m pytest -q", SUBMIT))
    b = load_trajectory(other)
    alignment = align(load_trajectory(baseline), b)
    assert alignment.first_divergence == 2
    extra = next(row for row in alignment.rows if row.kind == "b_only")
    assert extra.b == 2 and not b.steps[1].actions


@pytest.mark.timeout(120)
def test_the_same_run_twice_never_parts_and_print_says_so(openai_server, tmp_path, baseline):
    again = run(openai_server, tmp_path / "b", *commands(*COMMON, "python -m pytest -q", SUBMIT))
    assert align(load_trajectory(baseline), load_trajectory(again)).first_divergence is None
    done = subprocess.run([*swedeck_command(), "diff", str(baseline), str(again), "--print", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    record, *rows = [json.loads(line) for line in done.stdout.splitlines()]  # JSON lines (issue 66)
    assert record["first_divergence"] is None and record["a"]["steps"] == record["b"]["steps"] == 4
    assert record["divergences"] == [{"pair": [0, 1], "first_divergence": None}]
    assert [row["ref_command"] for row in rows] == [*COMMON, "python -m pytest -q", SUBMIT]
    assert all(row["others"][0]["kind"] == "same" for row in rows)
    text = subprocess.run([*swedeck_command(), "diff", str(baseline), str(again), "--print"], capture_output=True,
                          text=True, timeout=60)
    assert "first divergence: the runs never part" in text.stdout


def test_the_same_steps_in_other_formats_never_part(tmp_path):
    ours = load_trajectory(write_jsonl(tmp_path / "run.traj.jsonl", 40, 300))
    for other in (write_mini_v2(tmp_path / "mini.traj.json", 40, 300), write_sweagent(tmp_path / "swe.traj", 40, 300)):
        alignment = align(ours, load_trajectory(other))
        assert alignment.first_divergence is None, other
        assert len(alignment.rows) == 40


def test_the_diff_builds_each_message_as_the_alignment_reads_it(tmp_path, monkeypatch, capsys):
    """Issue 49: `swedeck diff` opens both runs lazily: a message is built when the alignment
    reads it, not all of them at the open as well, where only the latest were kept anyway
    (a 45,000-step ATIF file against itself: 28.7 -> 21.7 s)."""
    from swedeck.cli import main
    from swedeck.commands import diff as diff_command
    from swedeck.core.trajectory.lazy import MessageList

    a = write_mini_v2(tmp_path / "a.traj.json", 40, 300)
    b = write_sweagent(tmp_path / "b.traj", 40, 300)
    built: list[int] = []
    build = MessageList._build_block
    monkeypatch.setattr(MessageList, "_build_block", lambda self, index: (built.append(index), build(self, index))[1])
    at_open: list[int] = []
    load = diff_command.load_trajectory
    monkeypatch.setattr(diff_command, "load_trajectory",
                        lambda path, **options: (load(path, **options), at_open.append(len(built)))[0])
    assert main(["diff", str(a), str(b), "--print"]) == 0
    assert "first divergence: the runs never part" in capsys.readouterr().out
    assert at_open == [0, 0] and built  # nothing built as the runs opened; then by the alignment


def test_a_step_only_a_took_at_the_end_is_after_bs_last(tmp_path):
    a = load_trajectory(write_jsonl(tmp_path / "a.traj.jsonl", 12, 100))
    b = load_trajectory(write_jsonl(tmp_path / "b.traj.jsonl", 10, 100))
    alignment = align(b, a)
    assert alignment.first_divergence == 11  # after B's (here: A's) last step
    assert [row.kind for row in alignment.rows][-2:] == ["b_only", "b_only"]


# --- the view -----------------------------------------------------------------------------------


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def pair(tmp_path_factory, baseline) -> tuple[Path, Path]:
    """A, and B that writes the file before it reads it (real runs, recorded once for the module)."""
    with recorded_once(tmp_path_factory, "pair") as folder, OpenAIServer() as server:
        other = run(server, folder / "b", *commands("ls", "echo 'x = 1' > calc.py", "cat calc.py",
                                                   "python -m pytest -q", SUBMIT))
    return baseline, other


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_the_view_opens_at_the_first_divergence_and_moves_between_them(pair):
    from support.waiting import wait_for
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.diff.diff_screen import DiffScreen
    from swedeck.tui.diff.dual_curve import DualCurve
    from swedeck.tui.shared.prompt_inspector import PromptInspector

    a, b = pair
    app = DiffApp.of(str(a), str(b))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        screen = app.screen
        header = str(screen.query_one("#diff-header").render())
        assert "first divergence: step 2 of A" in header and "row 2/5" in header
        assert screen.query_one("#side-a").has_class("-missing")  # B's echo: A took no step here
        assert "$ echo 'x = 1' > calc.py" in str(screen.query_one("#model-b").render())
        await pilot.press("l")  # cat in both: what it printed differs, and those lines are set apart
        assert "row 3/5" in str(screen.query_one("#diff-header").render())
        assert [k for k in ("a", "b") if screen.query_one(f"#side-{k}").has_class("-missing")] == []
        row = screen.alignment.rows[screen.row]
        assert (row.kind, row.a, row.b, row.output_differs) == ("same", 2, 3, True)
        assert screen.query_one("#output-b")._changed and "x = 1" in screen.query_one("#output-b").text
        await pilot.press("0", "d")
        assert screen.row == 1
        await pilot.press("d")  # the only stretch where they differ: said, not moved
        assert screen.row == 1
        await pilot.press("l", "t")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptInspector))
        assert "step 2" in str(app.screen.query_one("#inspector-summary").render())
        await pilot.press("escape", "p")  # both final patches, side by side
        from swedeck.tui.diff.patch_screen import PatchScreen

        await wait_for(pilot, lambda: isinstance(app.screen, PatchScreen))
        assert app.screen.query_one("#patch-side-a").border_title.startswith("A · patch · ")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen.query(DualCurve) and app.screen.query_one(DualCurve).a)
        assert len(app.screen.query_one(DualCurve).a) == len(screen.alignment.rows)
        await pilot.press("q")


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_long_historys_prompt_in_the_diff_is_worked_out_off_the_ui_thread(pair, monkeypatch):
    """Issue 64: the diff's `t` is the replay's: past `PROMPT_IN_WORKER` messages it says it is
    working, and opens the inspector when its worker is done, with the model's window."""
    from support.waiting import wait_for
    from swedeck.core.meter import model_window
    from swedeck.core.prompt_view import step_prompt
    from swedeck.core.replay import open_run
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.diff.diff_screen import DiffScreen
    from swedeck.tui.shared import prompt_inspector

    monkeypatch.setattr(open_run, "PROMPT_IN_WORKER", 1)
    a, b = pair
    app = DiffApp.of(str(a), str(b))
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        screen = app.screen
        await pilot.press("0", "l", "l", "T")
        await wait_for(pilot, lambda: isinstance(app.screen, prompt_inspector.PromptInspector))
        assert any("working out step" in notice.message for notice in app._notifications)
        side = screen.sides["b"]
        number = screen.alignment.rows[screen.row].b
        expected = step_prompt(side.trajectory, number, screen.processors, model_window(side.trajectory.info.model_name))
        assert [line.tokens for line in app.screen.lines] == [line.tokens for line in expected.lines]
        assert str(app.screen.query_one("#inspector-summary").render()) == prompt_inspector.step_summary(expected)


@pytest.mark.timeout(120)
def test_the_installed_command_shows_the_diff_in_a_terminal(pair, tmp_path):
    import uuid

    from support.terminal import TMUX, exit_code, send_keys, wait_for_text

    a, b = pair
    session = f"swedeck-diff-{uuid.uuid4().hex[:6]}"
    done = tmp_path / "exit-code"
    command = " ".join([*swedeck_command(), "diff", str(a), str(b)]) + f"; echo $? > {done}"
    subprocess.run([*TMUX, "new-session", "-d", "-s", session, "-x", "120", "-y", "32", command], check=True)
    try:
        screen = wait_for_text(session, "first divergence: step 2 of A", timeout=30)
        assert "no step here" in screen and "echo 'x = 1' > calc.py" in screen
        send_keys(session, "q")
        assert exit_code(done, timeout=20) == "0"
    finally:
        subprocess.run([*TMUX, "kill-session", "-t", session], capture_output=True)


# --- two batches ----------------------------------------------------------------------------------


@pytest.fixture
def two_batches(openai_server, tmp_path) -> tuple[Path, Path]:
    """The same three instances in two real batches: in B, `p-2` never submits (step limit) and
    `p-3` submits another patch; a verdicts file in B says `p-1` is resolved."""
    from support.batch import ID_IN_TASK, conversation, run_batch, write_instances
    from swedeck.core.batch.instances import load_instances

    instances = load_instances(str(write_instances(tmp_path / "i.jsonl", ["p-1", "p-2", "p-3"])))

    def answer(variant: str):
        def respond(body: dict) -> Turn:
            instance_id = ID_IN_TASK.search(conversation(body)).group(1)
            if variant == "b" and instance_id == "p-2":
                return Turn.bash_tool("ls")
            patch = "another patch" if variant == "b" and instance_id == "p-3" else f"patch for {instance_id}"
            return Turn.bash_tool(f"{SUBMIT} && echo '{patch}'")
        return respond

    folders = []
    for variant in ("a", "b"):
        openai_server.respond(answer(variant))
        config = make_config(tmp_path, model_config(openai_server), agent__step_limit=2)
        out = tmp_path / f"batch-{variant}"
        run_batch(config, instances, out)
        folders.append(out)
    (folders[1] / "verdicts.json").write_text(json.dumps({"p-1": {"resolved": True}}))
    (folders[0] / "verdicts.json").write_text(json.dumps({"p-1": "resolved"}))
    return folders[0], folders[1]


@pytest.mark.timeout(120)
def test_two_batches_list_the_instances_whose_outcome_differs_first(two_batches):
    a, b = two_batches
    done = subprocess.run([*swedeck_command(), "diff", str(a), str(b), "--print", "--json"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert [(item["instance_id"], item["differs"]) for item in record["instances"]] == [
        ("p-2", True), ("p-1", False), ("p-3", False)]  # p-3 submitted in both, a patch in both: the same outcome
    p2 = record["instances"][0]
    assert p2["a"]["exit_status"] == "Submitted" and p2["b"]["exit_status"] == "LimitsExceeded"
    assert record["instances"][1]["a"]["verdict"] == record["instances"][1]["b"]["verdict"] == "resolved"
    text = subprocess.run([*swedeck_command(), "diff", str(a), str(b), "--print"], capture_output=True, text=True,
                          timeout=60).stdout
    assert "3 instances, 1 with another outcome (listed first)" in text and "≠ p-2" in text
    mixed = subprocess.run([*swedeck_command(), "diff", str(a), str(a / "p-1" / "p-1.traj.json"), "--print"],
                           capture_output=True, text=True, timeout=60)
    assert mixed.returncode == 2 and "not a batch output folder" in mixed.stderr


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_enter_on_an_instance_opens_the_pairs_diff_and_q_comes_back(two_batches):
    from textual.widgets import DataTable

    from support.waiting import wait_for
    from swedeck.core.diff.batch import compare_batches
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.diff.batch_screen import BatchDiffScreen
    from swedeck.tui.diff.diff_screen import DiffScreen

    a, b = two_batches
    app = DiffApp.of_batches(compare_batches(a, b))
    async with app.run_test(size=(140, 36)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, BatchDiffScreen))
        listing = app.screen
        table = listing.query_one(DataTable)
        assert table.row_count == 3 and "LimitsExceeded" in str(table.get_row_at(0))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen))
        header = str(app.screen.query_one("#diff-header").render())
        assert "p-2.traj.json" in header and "first divergence: step 1 of A" in header
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is listing)
        assert app.is_running


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_three_batches_in_the_view_enter_compares_an_instances_runs(two_batches):
    """Issue 66.3: `swedeck diff RUN_1/ RUN_2/ RUN_3/` lists each instance with its outcome in
    every run, those that differ first, each run's totals above; Enter opens the instance's runs
    in the N-run view and `q` comes back."""
    import shutil

    from textual.widgets import DataTable, Static

    from support.waiting import wait_for
    from swedeck.core.diff.batch import compare_many
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.diff.many_batches_screen import ManyBatchesScreen
    from swedeck.tui.diff.many_screen import ManyRunsScreen

    a, b = two_batches
    c = a.parent / "batch-c"
    shutil.copytree(a, c)
    (c / "verdicts.json").write_text(json.dumps({"p-1": "unresolved", "p-3": "resolved"}))
    app = DiffApp.of_many_batches(compare_many([a, b, c]))
    async with app.run_test(size=(160, 40)) as pilot:
        listing = await wait_for(pilot, lambda: isinstance(app.screen, ManyBatchesScreen) and app.screen)
        table = listing.query_one(DataTable)
        assert table.row_count == 3
        assert [str(table.get_row_at(row)[1]) for row in range(3)] == ["p-1", "p-2", "p-3"]
        first = [str(cell) for cell in table.get_row_at(0)]
        assert first[0] == "≠" and "resolved" in first[2] and "unresolved" in first[4], first
        header = str(listing.query_one("#many-batches-header", Static).render())
        assert "3 batches · 3 instances · 3 with outcomes that differ" in header and "run 2: batch-c" in header
        await pilot.press("enter")
        many = await wait_for(pilot, lambda: isinstance(app.screen, ManyRunsScreen) and app.screen)
        assert all("p-1.traj.json" in path for path in many.paths) and len(many.paths) == 3
        await pilot.press("q")
        await wait_for(pilot, lambda: app.screen is listing)
        assert app.is_running


def prepared_run(server, folder: Path, data: str, *turns: Turn, system: str | None = None,
                 model: str | None = None) -> Path:
    """`run` in the one working folder `folder.parent / "work"` (the task names the folder: the
    runs must share it to see the same prompt), holding `data.txt`, with another system prompt or
    model name if given; its trajectory is kept as `folder.traj.json`."""
    import shutil

    work = folder.parent / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir()
    (work / "data.txt").write_text(data)
    server.script(*turns)
    settings = model_config(server)
    if model is not None:
        settings = settings.model_copy(update={"model_name": model})
    fields = {"agent__mode": "yolo", **({"agent__system_template": system} if system else {})}
    config = make_config(work, settings, **fields)
    result = run_headless(config, TASK, out=io.StringIO())
    assert result.exit_status.value == "Submitted", result
    return Path(shutil.copy(config.run.output, folder.with_suffix(".traj.json")))


@pytest.mark.timeout(240)
def test_n_runs_each_pair_parted_and_why(openai_server, tmp_path):
    """Issue 66: five real runs of one task, the first the reference: one that chose another
    command from the same prompt (sampling), one whose earlier command printed something else
    (tool output), one with another system prompt (context), one with another model (model).
    Every pair's first divergence is classed with its evidence."""
    plan = ["cat data.txt", "python -m pytest -q", SUBMIT]
    runs = [prepared_run(openai_server, tmp_path / "ref", "42\n", *commands(*plan)),
            prepared_run(openai_server, tmp_path / "sampled", "42\n", *commands("cat data.txt", "ls -la", SUBMIT)),
            prepared_run(openai_server, tmp_path / "output", "43\n", *commands("cat data.txt", "ls -la", SUBMIT)),
            prepared_run(openai_server, tmp_path / "system", "42\n", *commands("cat data.txt", "ls -la", SUBMIT),
                         system="You are a careful engineer. Work in small steps."),
            prepared_run(openai_server, tmp_path / "model", "42\n", *commands("cat data.txt", "ls -la", SUBMIT),
                         model="openai/another-model")]
    done = subprocess.run([*swedeck_command(), "diff", *map(str, runs), "--print", "--json"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, *rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(first["runs"]) == 5 and len(first["divergences"]) == 10  # every pair
    found = {tuple(entry["pair"]): entry["first_divergence"] for entry in first["divergences"]}
    assert {pair[1]: found[pair]["class"] for pair in [(0, 1), (0, 2), (0, 3), (0, 4)]} == {
        1: "sampling", 2: "tool output", 3: "context", 4: "model"}
    assert all(found[(0, k)]["step"] == 2 for k in range(1, 5))
    assert found[(0, 2)]["evidence"]["step"] == 1 and found[(0, 2)]["evidence"]["lines"] == ["-42", "+43"]
    assert found[(0, 3)]["evidence"]["part"] == "the system prompt"
    assert found[(0, 4)]["evidence"]["b"] == "openai/another-model"
    assert found[(1, 2)] is None  # the same commands throughout: they never part (only an output differed)
    # rows: the reference's steps, with what each run did there
    ours = [row for row in rows if row["ref_step"] is not None]
    assert [row["ref_command"] for row in ours] == plan
    assert all(other["kind"] != "same" for other in ours[1]["others"])  # where they all parted
    assert [other["kind"] for other in ours[2]["others"]] == ["same"] * 4  # and all submitted
    assert [other["output_differs"] for other in ours[0]["others"]] == [False, True, False, False]
    theirs = [row["others"][0] for row in rows if row["ref_step"] is None]  # a step only another run took
    assert {(other["kind"], other["command"]) for other in theirs} == {("b_only", "ls -la")}
    text = subprocess.run([*swedeck_command(), "diff", *map(str, runs), "--print"], capture_output=True, text=True,
                          timeout=120).stdout
    assert "runs 0 and 2: part at step 2 of run 0: tool output: the output of step 1 differed: -42 / +43" in text
    two = subprocess.run([*swedeck_command(), "diff", str(runs[0]), str(runs[1]), "--print"], capture_output=True,
                         text=True, timeout=120).stdout
    assert "why: sampling: the same" in two


@pytest.mark.timeout(120)
def test_three_batches_each_instance_with_its_outcome_in_each_and_the_flips(two_batches):
    """Issue 66.3: `swedeck diff RUN_1/ … RUN_N/`: one row per instance with its outcome in each
    run (`outcomes`, `outcomes_differ`), those that differ first; a summary per run and, for each
    pair, the instances resolved in one and not the other."""
    import shutil

    a, b = two_batches
    c = a.parent / "batch-c"
    shutil.copytree(a, c)
    (c / "verdicts.json").write_text(json.dumps({"p-1": "unresolved", "p-3": "resolved"}))
    done = subprocess.run([*swedeck_command(), "diff", str(a), str(b), str(c), "--print", "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, *rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(row["instance_id"], row["outcomes_differ"]) for row in rows] == [
        ("p-1", True), ("p-2", True), ("p-3", True)]
    assert [outcome["verdict"] for outcome in rows[0]["outcomes"]] == ["resolved", "resolved", "unresolved"]
    verdicts = [[row["outcomes"][k]["verdict"] for row in rows] for k in range(3)]
    assert [(run["resolved"], run["unresolved"]) for run in first["runs"]] == [
        (found.count("resolved"), sum(1 for v in found if v not in (None, "resolved"))) for found in verdicts]
    assert [run["resolved"] for run in first["runs"]] == [1, 1, 1]
    flips = {tuple(flip["pair"]): (flip["resolved_only_in_first"], flip["resolved_only_in_second"])
             for flip in first["flips"]}
    assert flips == {(0, 1): ([], []), (0, 2): (["p-1"], ["p-3"]), (1, 2): (["p-1"], ["p-3"])}
    text = subprocess.run([*swedeck_command(), "diff", str(a), str(b), str(c), "--print"], capture_output=True,
                          text=True, timeout=60).stdout
    assert "runs 0 and 2: 1 resolved only in 0, 1 only in 2" in text


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_three_runs_in_the_view_the_reference_against_each_switched_with_a_key(tmp_path):
    """Issue 66.1: `swedeck diff A B C` shows every run's steps in columns beside the reference's
    where the terminal is wide enough (at 80x24 the reference and the chosen run, `]` switching),
    each run's first divergence marked and classed, every context curve in one chart; Enter opens
    the reference and the chosen run in the two-run view, where `]` goes on to the next run and
    `q` comes back."""
    from textual.widgets import DataTable, Static

    from support.waiting import wait_for
    from swedeck.tui.diff.app import DiffApp
    from swedeck.tui.diff.diff_screen import DiffScreen
    from swedeck.tui.diff.many_curve import ManyCurve
    from swedeck.tui.diff.many_screen import ManyRunsScreen

    paths = [str(write_jsonl(tmp_path / f"run{k}.traj.jsonl", 6 + k, 200)) for k in range(3)]
    app = DiffApp.of_many(paths)
    async with app.run_test(size=(160, 48)) as pilot:
        many = await wait_for(pilot, lambda: isinstance(app.screen, ManyRunsScreen) and app.screen)
        table = many.query_one(DataTable)
        labels = [str(column.label) for column in table.columns.values()]
        assert labels[0] == "R" and "run1.traj.jsonl" in labels[1] and "run2.traj.jsonl" in labels[2], labels
        header = str(many.query_one("#many-diff-header", Static).render())
        assert "run1.traj.jsonl: 7 steps, parts at step 7 of R: sampling" in header
        assert "run2.traj.jsonl: 8 steps, parts at step 7 of R: sampling" in header
        cells = [[str(cell) for cell in table.get_row_at(row)] for row in range(table.row_count)]
        assert [row[0].split()[0] for row in cells[:6]] == ["1", "2", "3", "4", "5", "6"]
        assert sum(1 for row in cells for cell in row[1:] if cell.startswith("◆")) == 2  # one first divergence a run
        assert all(row[1].startswith(" =") and row[2].startswith(" =") for row in cells[:6])
        curve = many.query_one(ManyCurve)
        await wait_for(pilot, lambda: len(curve.series) == 3 and all(any(v for v in values) for values in curve.series))
        await pilot.press("enter")

        def shown() -> str:
            screen = app.screen
            return str(screen.query_one("#diff-totals", Static).render()) if isinstance(screen, DiffScreen) else ""

        first = await wait_for(pilot, lambda: "run 1 of 2 against the reference" in shown() and shown())
        assert "run1.traj.jsonl" in first and "they part at step 7 of A: sampling" in first
        await pilot.press("right_square_bracket")
        second = await wait_for(pilot, lambda: "run 2 of 2" in shown() and shown())
        assert "run2.traj.jsonl" in second
        await pilot.press("left_square_bracket")
        await wait_for(pilot, lambda: "run 1 of 2" in shown())
        await pilot.press("q")  # back to every run
        await wait_for(pilot, lambda: app.screen is many)
        await pilot.press("q")
        await wait_for(pilot, lambda: app._exit)
    narrow = DiffApp.of_many(paths)
    async with narrow.run_test(size=(80, 24)) as pilot:
        many = await wait_for(pilot, lambda: isinstance(narrow.screen, ManyRunsScreen) and narrow.screen)
        table = many.query_one(DataTable)

        def columns() -> list[str]:
            return [str(column.label) for column in table.columns.values()]
        assert len(columns()) == 2 and "run1.traj.jsonl" in columns()[1]
        await pilot.press("right_square_bracket")
        await wait_for(pilot, lambda: len(columns()) == 2 and "run2.traj.jsonl" in columns()[1])
        rows = [[str(cell) for cell in table.get_row_at(row)] for row in range(table.row_count)]
        assert len(rows) == 6 + 2  # the reference's steps and run 2's own; run 1's step alone is not drawn
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(narrow.screen, DiffScreen)
                       and "run 2 of 2" in str(narrow.screen.query_one("#diff-totals", Static).render()))
    two = DiffApp.of(paths[0], paths[1])
    async with two.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: "they part at step 7 of A" in str(two.screen.query_one("#diff-totals", Static).render()))
        assert not two.check_action("other_run", (1,))


@pytest.mark.timeout(120)
def test_the_runs_compared_as_an_offline_page_with_each_divergence_classed(tmp_path):
    """Issue 66.2: `swedeck diff A B C --html OUT` writes each run's totals, every pair's first
    divergence with its class and evidence, and the aligned steps; a real Chromium shows a run's
    hostile text as the characters it is, masks a secret, and the page asks for nothing."""
    from test_export import write_hostile_run

    from support.browser import Browser

    secret = "sk-proj-" + "A1b2C3d4" * 6
    hostile = write_hostile_run(tmp_path / "hostile.traj.json", secret)
    runs = [str(write_jsonl(tmp_path / f"run{k}.traj.jsonl", 6 + k, 200)) for k in range(2)]
    out = tmp_path / "compared.html"
    done = subprocess.run([*swedeck_command(), "diff", *runs, str(hostile), "--html", str(out)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert secret not in out.read_text()
    browser = Browser()
    try:
        browser.open(out)
        divergences = browser.evaluate("[...document.querySelectorAll('#divergences tr')].slice(1)"
                                       ".map(row => [...row.cells].map(cell => cell.textContent))")
        assert divergences[0][:3] == ["R and 1", "step 7 of R", "sampling"], divergences
        assert [row[0] for row in divergences] == ["R and 1", "R and 2", "1 and 2"]
        assert all(row[2] for row in divergences), divergences  # every pair parts, each classed
        assert "run0.traj.jsonl" in browser.text("runs") and "hostile.traj.json" in browser.text("runs")
        steps = browser.evaluate("[...document.querySelectorAll('#rows tr')].length")
        assert steps >= 7 + 1
        assert browser.evaluate("document.querySelectorAll('#rows td.first').length") == 2  # each run's first divergence
        shown = browser.evaluate("document.getElementById('rows').textContent")
        assert "echo '<script>window.__pwned = 5</script>'" in shown  # its command, as the characters it is
        assert browser.evaluate("document.querySelectorAll('script, img, a').length") == 0
        assert browser.evaluate("window.__pwned === undefined")
        assert not [url for url in browser.requests if not url.startswith("file:")], browser.requests
        assert not browser.errors, browser.errors
    finally:
        browser.close()


@pytest.mark.timeout(120)
def test_runs_without_a_cost_of_their_own_are_priced_from_their_usage(tmp_path):
    """Issue 65.3: `diff` totals give each run's dollars: its own figure where it has one, else
    priced from its usage and litellm's prices (`cost_source: priced`), as `replay` prices it."""
    session = Path(__file__).parent / "fixtures" / "agents" / "claude-code" / "cc-session-1.jsonl"
    done = subprocess.run([*swedeck_command(), "diff", str(session), str(session), "--print", "--json"],
                          capture_output=True, text=True, timeout=60)
    first = json.loads(done.stdout.splitlines()[0])
    printed = subprocess.run([*swedeck_command(), "replay", str(session), "--print", "--json"], capture_output=True,
                             text=True, timeout=60)
    total = json.loads(printed.stdout.splitlines()[0])["cost"]["total_usd"]
    assert [(run["cost"], run["cost_source"], run["unpriced"]) for run in first["runs"]] == \
        [(pytest.approx(total, abs=1e-6), "priced", [])] * 2  # its subagent's calls too
    text = subprocess.run([*swedeck_command(), "diff", str(session), str(session), "--print"], capture_output=True,
                          text=True, timeout=60).stdout
    assert f"${total:.4f} priced" in text.splitlines()[0]
