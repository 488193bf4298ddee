"""Every key of the live UI (SPEC §10.2), each with an id users can remap.

`config.ui.keymap` maps ids to keys (`{approve: "y,enter", processors: "f2"}`); the app
hands it to Textual's `App.set_keymap`. The same table feeds the F1 help and the command
palette, so a binding can never be missing from either.
"""

from __future__ import annotations

from textual.binding import Binding

# The footer shows keys in this order and cuts what does not fit: the ones a person must
# find at 80 columns come first (approve, reject, interrupt, quit, help).
SESSION_BINDINGS: list[Binding] = [
    Binding("y,enter", "approve", "Approve", id="approve"),
    Binding("n", "reject", "Reject", id="reject"),
    Binding("escape", "interrupt", "Interrupt", id="interrupt"),
    Binding("ctrl+q", "app.request_quit", "Quit", id="quit", priority=True),
    Binding("question_mark,f1", "app.help", "Help", id="help"),
    Binding("e", "edit", "Edit", id="edit"),
    Binding("a", "always_allow", "Always allow", id="always_allow"),
    Binding("m", "cycle_mode", "Mode", id="cycle_mode"),
    Binding("ctrl+y", "yolo", "Yolo", id="yolo", show=False),
    Binding("p", "toggle_processors", "Processors", id="processors"),
    Binding("t", "prompt_inspector", "Prompt", id="prompt_inspector"),
    Binding("i,enter", "focus_input", "Type", id="focus_input"),
    Binding("ctrl+c", "interrupt", "Interrupt", id="interrupt_ctrl_c", show=False, priority=True),
    Binding("s", "toggle_split", "Split", id="toggle_split", show=False),
]

APP_BINDINGS: list[Binding] = [
    # The same two on the app, for screens that are not the session (help, pauses, replay)
    Binding("ctrl+q", "request_quit", "Quit", id="quit", priority=True, show=False),
    Binding("question_mark,f1", "help", "Help", id="help", show=False),
]

DESCRIPTIONS: dict[str, str] = {
    "approve": "Run the proposed command",
    "reject": "Reject the command, with a comment for the model",
    "edit": "Edit the command, then run it",
    "always_allow": "Run it and never ask again for this command",
    "cycle_mode": "Cycle confirm -> yolo -> human",
    "yolo": "Switch to yolo mode (the pending command still waits)",
    "processors": "Show or hide the history processors panel",
    "prompt_inspector": "Show exactly what the model gets next",
    "interrupt": "Close what is open (panel, input line), else interrupt the model or the running command",
    "focus_input": "Type in the input line (a task, a follow-up, a command) when it waits for you",
    "interrupt_ctrl_c": "Interrupt the model or the running command",
    "toggle_split": "Side by side / stacked panes",
    "quit": "Quit (asks while a command runs)",
    "help": "This help",
}


def all_bindings() -> list[Binding]:
    """Every binding once (the app's quit and help repeat the session screen's)."""
    seen = {binding.id for binding in SESSION_BINDINGS}
    return [*SESSION_BINDINGS, *(binding for binding in APP_BINDINGS if binding.id not in seen)]
