"""Every key of the diff view (SPEC §16), with ids: as in replay, and `d` to the next divergence."""

from __future__ import annotations

from textual.binding import Binding

DIFF_BINDINGS: list[Binding] = [
    Binding("l,right", "next_place", "Next", id="diff_next", tooltip="Next aligned step"),
    Binding("h,left", "previous_place", "Previous", id="diff_previous", tooltip="Previous aligned step"),
    Binding("q", "quit_view", "Quit", id="diff_quit", tooltip="Quit"),
    Binding("f1,question_mark", "app.help", "Help", id="diff_help", tooltip="This help"),
    Binding("0", "first_place", "First", id="diff_first", show=False, tooltip="First aligned step"),
    Binding("dollar_sign", "last_place", "Last", id="diff_last", show=False, tooltip="Last aligned step"),
    Binding("d", "next_divergence", "Next divergence", id="diff_next_divergence",
            tooltip="The next place the runs part"),
    Binding("D", "previous_divergence", "Previous divergence", id="diff_previous_divergence", show=False,
            tooltip="The previous place the runs part"),
    Binding("g", "goto", "Go to", id="diff_goto", tooltip="Go to a step of A (type its number)"),
    Binding("slash", "search", "Search", id="diff_search", tooltip="Search both runs' thoughts, commands and output"),
    Binding("n", "next_match", "Next match", id="diff_next_match", show=False, tooltip="Next search match"),
    Binding("N", "previous_match", "Previous match", id="diff_previous_match", show=False,
            tooltip="Previous search match"),
    Binding("t", "prompt('a')", "Prompt A", id="diff_prompt_a", tooltip="What A's model saw at this step"),
    Binding("T", "prompt('b')", "Prompt B", id="diff_prompt_b", show=False, tooltip="What B's model saw at this step"),
    Binding("p", "patches", "Patches", id="diff_patches", tooltip="Both runs' final patches side by side"),
    Binding("right_square_bracket", "app.other_run(1)", "Next run", id="diff_next_run",
            tooltip="With three or more runs: the reference against the next run"),
    Binding("left_square_bracket", "app.other_run(-1)", "Previous run", id="diff_previous_run", show=False,
            tooltip="With three or more runs: the reference against the previous run"),
    Binding("f", "fork('a')", "Fork A", id="diff_fork_a", show=False, tooltip="Fork a live session from A's step"),
    Binding("F", "fork('b')", "Fork B", id="diff_fork_b", show=False, tooltip="Fork a live session from B's step"),
]
