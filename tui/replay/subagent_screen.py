"""`s` in replay (issue 65.4): the subagent tree of the open run: the main run and each subagent
it started, with its steps, tokens, dollars, duration and how it ended, and the step whose call
started it. Summed by the core (`core/subagents.py`) in a worker, the nodes shown as they are
read; Enter opens a node in place, as a replay of its own with its own meter (`q` there comes
back); on the main run's node, back to the run at the step that started the chosen one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Label, Tree
from textual.worker import Worker

from swedeck.core.cost import Prices
from swedeck.core.subagents import RunNode, node_line, subagent_tree
from swedeck.core.text import visible
from swedeck.core.trajectory.model import Trajectory

from ..kit.view_screen import ViewModal, background, css_beside


class SubagentScreen(ViewModal[RunNode | None]):
    """Dismissed with the node chosen (the replay opens it), or None."""

    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,s", "dismiss", "Close")]

    def __init__(self, trajectory: Trajectory, prices: Callable[[], Prices]) -> None:
        super().__init__()
        self.trajectory = trajectory
        self.prices = prices
        """The config's prices over litellm's map (read in the worker: the config's import is slow)."""
        self.root: RunNode | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="subagent-box") as box:
            box.border_title = "subagents"
            tree: Tree[RunNode] = Tree(Text("reading the run…"), id="subagent-tree")
            tree.show_root = True
            yield tree
            yield Label("reading the subagents' runs…", id="subagent-hint", markup=False)

    def on_mount(self) -> None:
        self.query_one(Tree).focus()
        self.summed()

    class Progress(Message):
        def __init__(self, done: int, total: int) -> None:
            super().__init__()
            self.done, self.total = done, total

    class Summed(Message):
        def __init__(self, root: RunNode) -> None:
            super().__init__()
            self.root = root

    @background(exclusive=True, group="subagents")
    def summed(self) -> None:
        def progress(done: int, total: int) -> None:
            self.post_message(self.Progress(done, total))
        root = subagent_tree(self.trajectory, self.prices(), progress=progress)
        self.post_message(self.Summed(root))

    def on_subagent_screen_progress(self, message: Progress) -> None:
        self.query_one("#subagent-hint", Label).update(f"reading the subagents' runs: {message.done} of {message.total}…")

    def on_subagent_screen_summed(self, message: Summed) -> None:
        self.root = root = message.root
        tree: Tree[RunNode] = self.query_one(Tree)
        tree.reset(Text(visible(node_line(root))), root)
        for child in root.children:
            tree.root.add_leaf(Text(visible(node_line(child))), child)  # a run's words, never markup
        tree.root.expand()
        hint = (f"{len(root.children)} subagents · Enter opens one in place (q there comes back) · Esc closes"
                if root.children else "no subagent beside this run · Esc closes")
        self.query_one("#subagent-hint", Label).update(hint)

    def worker_failed(self, worker: Worker[Any]) -> bool:
        error = worker.error
        self.query_one("#subagent-hint", Label).update(visible(f"the subagents could not be read: "
                                                               f"{type(error).__name__}: {error}"))
        return True

    def on_tree_node_selected(self, event: Tree.NodeSelected[Any]) -> None:
        node = event.node.data
        if isinstance(node, RunNode) and node.id != "main" and not node.error:
            self.dismiss(node)
