"""Every key of the replay view (SPEC §11.1), with ids; the same table feeds F1 and the palette."""

from __future__ import annotations

from textual.binding import Binding

REPLAY_BINDINGS: list[Binding] = [
    Binding("l,right", "next_step", "Next", id="replay_next"),
    Binding("h,left", "previous_step", "Previous", id="replay_previous"),
    Binding("0", "first_step", "First", id="replay_first", show=False),
    Binding("dollar_sign", "last_step", "Last", id="replay_last", show=False),
    Binding("g", "goto", "Go to", id="replay_goto"),
    Binding("slash", "search", "Search", id="replay_search"),
    Binding("n", "next_match", "Next match", id="replay_next_match", show=False),
    Binding("N", "previous_match", "Previous match", id="replay_previous_match", show=False),
    Binding("L", "next_file", "Next file", id="replay_next_file", show=False),
    Binding("H", "previous_file", "Previous file", id="replay_previous_file", show=False),
    Binding("t", "prompt", "Prompt", id="replay_prompt"),
    Binding("p", "what_if", "What-if", id="replay_what_if"),
    Binding("f", "fork", "Fork", id="replay_fork"),
    Binding("q", "quit_replay", "Quit", id="replay_quit"),
    Binding("f1,question_mark", "help", "Help", id="replay_help"),
]

DESCRIPTIONS: dict[str, str] = {
    "replay_next": "Next step",
    "replay_previous": "Previous step",
    "replay_first": "First step",
    "replay_last": "Last step",
    "replay_goto": "Go to a step (type its number)",
    "replay_search": "Search thoughts, commands and output",
    "replay_next_match": "Next search match",
    "replay_previous_match": "Previous search match",
    "replay_next_file": "Next trajectory of the folder",
    "replay_previous_file": "Previous trajectory of the folder",
    "replay_prompt": "Prompt inspector: what the model saw at this step",
    "replay_what_if": "What-if: other history processors and the tokens they save",
    "replay_fork": "Fork a live session from this step",
    "replay_quit": "Quit",
    "replay_help": "This help",
}
