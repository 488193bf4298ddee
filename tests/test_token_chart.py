"""The token chart of replay and what-if (issue 32.2): a y axis with the top value and 0,
the window as a line, the current step marked and named with its value, and marks under
the steps where a compaction or a processor change happened. The chart's lines, and the
real replay app showing them for a run with a compaction."""

from __future__ import annotations

import pytest

from swedeck.core import paths
from swedeck.tui.widgets.token_chart import chart_lines


def test_axis_window_current_step_and_marks():
    points = [1000 + 400 * i for i in range(12)]
    lines = [text for text, _ in chart_lines(points, 60, 5, window=8000, current=10, marks={4: "⟲", 7: "p"})]
    assert lines[0].startswith("8.0k ┤") and "┄" in lines[0]  # the window is the top line, where no bar reaches
    assert lines[3].startswith("   0 ┤")
    axis = lines[4]
    bars = axis.index("└") + 1
    assert axis[bars + 3] == "⟲" and axis[bars + 6] == "p" and axis[bars + 9] == "▲"
    assert "step 10/12: 4,600 tokens · window 8,000" in axis
    spans = chart_lines(points, 60, 5, window=8000, current=10)[2][1]
    assert (bars + 9, bars + 10, "reverse") in spans  # the current step's column


def test_more_steps_than_columns_share_a_column():
    lines = [text for text, _ in chart_lines(list(range(300)), 40, 4, current=150)]
    assert "9 steps a column" in lines[-1]  # 300 over 35 columns (40 less the axis) and "step 150/300: 149 tokens" in lines[-1]
    assert max(len(line.split("┤", 1)[-1]) for line in lines[:-1]) <= 40


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_replay_draws_the_chart_with_its_compaction(tmp_path):
    from support.waiting import wait_for
    from swedeck.tui.replay.app import ReplayApp
    from swedeck.tui.widgets.token_chart import TokenChart

    demo = paths.shipped_configs_dir() / "demo" / "demo.traj.json"  # records a compaction before step 5
    app = ReplayApp([demo], start_step=-1)
    async with app.run_test(size=(120, 36)) as pilot:
        chart = app.screen.query_one(TokenChart)
        await wait_for(pilot, lambda: len(chart.points) == 6 and chart.marks.get(5) == "⟲")
        assert chart.current == 6
        drawn = str(chart.render())
        assert "step 6/6:" in drawn and "⟲▲" in drawn
        await pilot.press("h")
        await wait_for(pilot, lambda: "step 5/6:" in str(chart.render()))
