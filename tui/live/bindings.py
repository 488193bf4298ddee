"""Every key of the live UI (SPEC §10.2), each with an id users can remap.

`config.ui.keymap` maps ids to keys (`{approve: "y,enter", processors: "f2"}`); the kit
hands it to Textual's `App.set_keymap` (`tui/kit/ui_config.py`). The same table, each binding
saying what it does in its `tooltip`, feeds the F1 help and the command palette
(`tui/kit/app_base.py`), so a binding can never be missing from either.
"""

from __future__ import annotations

from textual.binding import Binding

# The footer shows keys in this order and cuts what does not fit: the ones a person must
# find at 80 columns come first (the answers to a command: approve, reject, always, edit; then
# interrupt, quit, help), drawn close together below 120 columns (`FittedFooter`).
SESSION_BINDINGS: list[Binding] = [
    Binding("y", "approve", "Approve", id="approve",
            tooltip="Run the proposed command"),
    Binding("enter", "approve_enter", "Approve", id="approve_enter", show=False,
            tooltip="Run the proposed command, unless something else (the processors panel, the prompt, "
                    "a comment) was opened since it was asked: then y approves"),
    Binding("n", "reject", "Reject", id="reject",
            tooltip="Reject the command, with a comment for the model"),
    Binding("a", "always_allow", "Always", id="always_allow",
            tooltip="Run it and never ask again for this command"),
    Binding("e", "edit", "Edit", id="edit",
            tooltip="Edit the command, then run it"),
    Binding("q", "leave", "Leave", id="leave",
            tooltip="Leave at once when the session has ended (it waits for a follow-up task)"),
    Binding("escape", "interrupt", "Interrupt", id="interrupt",
            tooltip="Close what is open (panel, input line), else interrupt the model or the running command"),
    Binding("ctrl+q", "app.request_quit", "Quit", id="quit", priority=True,
            tooltip="Quit (asks while a command runs)"),
    Binding("question_mark,f1", "app.help", "Help", id="help",
            tooltip="This help"),
    Binding("m", "cycle_mode", "Mode", id="cycle_mode",
            tooltip="Cycle confirm -> yolo -> human"),
    Binding("ctrl+y", "yolo", "Yolo", id="yolo", show=False,
            tooltip="Switch to yolo mode (the pending command still waits)"),
    Binding("p", "toggle_processors", "Processors", id="processors",
            tooltip="Show or hide the history processors panel"),
    Binding("t", "prompt_inspector", "Prompt", id="prompt_inspector",
            tooltip="Show exactly what the model gets next"),
    Binding("i,enter", "focus_input", "Type", id="focus_input",
            tooltip="Type in the input line (a task, a follow-up, a command) when it waits for you"),
    Binding("ctrl+c", "copy_or_interrupt", "Copy / interrupt", id="interrupt_ctrl_c", show=False, priority=True,
            tooltip="Copy the selected text; with nothing selected, interrupt the model or the running command"),
    Binding("s", "toggle_split", "Split", id="toggle_split", show=False,
            tooltip="Side by side / stacked panes"),
    Binding("S", "subagents", "Subagents", id="subagents", show=False,
            tooltip="The subagents the agent started so far, each with its steps, tokens and dollars (from the record)"),
    Binding("ctrl+k", "compact", "Compact", id="compact", show=False,
            tooltip="Compact the history with a summary before the next query (the summarize processor)"),
    Binding("ctrl+z", "undo_compaction", "Undo compaction", id="undo_compaction", show=False,
            tooltip="Undo the last compaction: the next prompt is the one before it"),
]
