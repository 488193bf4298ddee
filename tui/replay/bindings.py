"""Every key of the replay view (SPEC §11.1), with ids; the same table feeds F1 and the palette."""

from __future__ import annotations

from textual.binding import Binding

# The footer shows keys in this order and hides what does not fit whole (`FittedFooter`): the
# moves, quit and help come first, so they are there at 80 columns.
REPLAY_BINDINGS: list[Binding] = [
    Binding("l,right", "next_place", "Next", id="replay_next",
            tooltip="Next step"),
    Binding("h,left", "previous_place", "Previous", id="replay_previous",
            tooltip="Previous step"),
    Binding("q", "quit_view", "Quit", id="replay_quit",
            tooltip="Quit"),
    Binding("f1,question_mark", "app.help", "Help", id="replay_help",
            tooltip="This help"),
    Binding("0", "first_place", "First", id="replay_first", show=False,
            tooltip="First step"),
    Binding("dollar_sign", "last_place", "Last", id="replay_last", show=False,
            tooltip="Last step"),
    Binding("g", "goto", "Go to", id="replay_goto",
            tooltip="Go to a step (type its number)"),
    Binding("slash", "search", "Search", id="replay_search",
            tooltip="Search thoughts, commands and output"),
    Binding("n", "next_match", "Next match", id="replay_next_match", show=False,
            tooltip="Next search match"),
    Binding("N", "previous_match", "Previous match", id="replay_previous_match", show=False,
            tooltip="Previous search match"),
    Binding("L", "next_file", "Next file", id="replay_next_file", show=False,
            tooltip="Next trajectory of the folder"),
    Binding("H", "previous_file", "Previous file", id="replay_previous_file", show=False,
            tooltip="Previous trajectory of the folder"),
    Binding("t", "prompt", "Prompt", id="replay_prompt",
            tooltip="Prompt inspector: what the model saw at this step"),
    Binding("R", "rules", "Rules", id="replay_rules", show=False,
            tooltip="Approval rules (agent.rules): what they would have decided for every command of this run"),
    Binding("i", "fidelity", "Fidelity", id="replay_fidelity", show=False,
            tooltip="Fidelity: what the file recorded, what was rebuilt, what was skipped"),
    Binding("b", "branches", "Branches", id="replay_branches", show=False,
            tooltip="Branches: open a subagent's run or a sidechain kept beside this one (Esc comes back)"),
    Binding("s", "subagents", "Subagents", id="replay_subagents", show=False,
            tooltip="The subagent tree: each subagent's steps, tokens, dollars, duration; Enter opens one"),
    Binding("c", "child", "Child", id="replay_child", show=False,
            tooltip="Open the subagent this step's call started (q there comes back to this step)"),
    Binding("p", "what_if", "What-if", id="replay_what_if",
            tooltip="What-if: other history processors and the tokens they save"),
    Binding("x", "export", "Export", id="replay_export", show=False,
            tooltip="Export this file as ATIF (.json) or as one offline page (.html)"),
    Binding("f", "fork", "Fork", id="replay_fork",
            tooltip="Fork a live session from this step"),
]
