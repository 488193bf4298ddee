"""The live session screen (SPEC §10.1-§10.3, flows of §6.5): compose, layout, the
person's actions, and the transcript.

The session runs in a thread worker and talks to this screen through the controller's
queue (`AgentEvents`, paced by the controller). Each event first changes the state
(`SessionState.apply`: the header, the meter, the pending confirmation or question,
which widgets follow through `data_bind`), then adds what it says to the transcript and
the output pane (`DRAW`). Requests (confirm, input, pause) keep their future in the state
until the person answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events, getters
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Container
from textual.reactive import var
from textual.widgets import Input
from textual.worker import Worker

from swedeck.core import events as ev
from swedeck.core.agent.approvals import command_prefix
from swedeck.core.compaction_notes import compacted_text, started_text
from swedeck.core.exit_status import ExitStatus
from swedeck.core.messages import MessageType, task_text
from swedeck.core.processors.base import active_labels
from swedeck.core.text import visible

from ..kit.crash import crash_message
from ..kit.view_screen import ViewScreen, background, css_beside
from ..shared.prompt_inspector import PromptInspector
from ..widgets.command_block import CommandBlock
from ..widgets.context_meter import ContextMeter
from ..widgets.fitted_footer import FittedFooter
from ..widgets.header_bar import HeaderBar, HeaderInfo
from ..widgets.input_line import InputLine
from ..widgets.observation_pane import ObservationPane
from ..widgets.plan_panel import PlanPanel
from ..widgets.processors_panel import ProcessorsPanel
from ..widgets.transcript import Transcript
from .bindings import SESSION_BINDINGS
from .compaction_screen import CompactionScreen
from .controller import OutputChunk, SessionController, resolve
from .messages import AgentEvents, SessionFinished
from .pause_screen import PauseScreen
from .quit_screen import QuitScreen
from .session_state import SessionState

if TYPE_CHECKING:
    from swedeck.core.cost import Prices
    from swedeck.core.session import SessionControl, SessionResult
    from swedeck.core.subagents import RunNode

MODES: tuple[ev.Mode, ...] = ("confirm", "yolo", "human")
CONFIRM_ACTIONS = ("approve", "approve_enter", "reject", "edit", "always_allow")
LETTER_ACTIONS = ("approve", "reject", "edit", "always_allow", "cycle_mode", "toggle_processors", "prompt_inspector",
                  "toggle_split", "subagents", "focus_input", "app.help", "leave")
"""Actions on plain letters: while a text line has the focus, the letters are text."""
STACK_BELOW_COLUMNS = 110
"""In `ui.layout: auto`, narrower terminals stack the panes instead of splitting them."""

Draw = Callable[["SessionScreen", Any], Awaitable[None] | None]


class Panes(Container):
    """The transcript and the command output: side by side, or stacked."""

    stacked: var[bool] = var(False)

    def watch_stacked(self, stacked: bool) -> None:
        """The output pane docks at the right or at the bottom, with two fifths of the room; the
        transcript takes the rest. Only the output pane's own styles change: a class on the
        container restyles every widget under it (80 ms a press while an answer streamed, B16),
        and a change of the container's `layout` refreshes every widget under it, each block of
        each message in the transcript (0.1-0.4 s a press with a full transcript, B16)."""
        output = self.children[1]
        output.styles.dock = "bottom" if stacked else "right"
        output.styles.width = "100%" if stacked else "40%"
        output.styles.height = "40%" if stacked else "100%"

    def on_mount(self) -> None:
        self.watch_stacked(self.stacked)  # a value bound before the children were there

    @property
    def is_stacked(self) -> bool:
        """The panes one above the other, as laid out."""
        first, second = self.children[0].region, self.children[1].region
        return second.y >= first.bottom and second.x == first.x


class SessionScreen(SessionState, ViewScreen):
    CSS_PATH = css_beside(__file__)
    BINDINGS: ClassVar[list[BindingType]] = [*SESSION_BINDINGS]

    transcript = getters.query_one(Transcript)
    input_line = getters.query_one(InputLine)
    output_pane = getters.query_one(ObservationPane)
    processors_panel = getters.query_one(ProcessorsPanel)

    def __init__(self, session: SessionControl, registry: dict[str, type] | None = None) -> None:
        super().__init__()
        self.session = session
        self.registry = registry if registry is not None else _registry()
        self.controller = SessionController(self.post_message)
        self.result: SessionResult | None = None
        self.quitting = False
        self._draining = False
        self._enter_approves = False
        """Enter approves the pending command only while nothing else was opened since it was asked."""
        config = session.config
        self.set_reactive(SessionState.info, HeaderInfo(
            title=session.task or "(no task yet)", model=config.model.model_name or "",
            environment=config.environment.environment_class,
            host=config.environment.environment_class == "local", mode=session.mode,
            step_limit=config.agent.step_limit, cost_limit=config.agent.cost_limit,
        ))
        self.set_reactive(SessionState.processor_labels, active_labels(session.processors))

    # --- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield HeaderBar().data_bind(SessionState.info)
        with Panes(id="panes").data_bind(SessionState.stacked):
            yield Transcript(id="transcript")
            yield ObservationPane(id="observation")
        yield ProcessorsPanel(self.registry, self.session.processors, id="processors").data_bind(
            open=SessionState.processors_open)
        yield PlanPanel(id="plan").data_bind(plan=SessionState.plan)
        yield ContextMeter(id="meter").data_bind(status=SessionState.context, processors=SessionState.processor_labels,
                                                 notes=SessionState.meter_notes)
        yield InputLine(id="input").data_bind(purpose=SessionState.line_purpose)
        yield FittedFooter()

    def on_mount(self) -> None:
        self._apply_layout(self.size.width)
        self.transcript.focus()
        # Start the agent after the first frame: building the model loads litellm (seconds),
        # which must happen behind a visible UI (SPEC §4.6).
        self.call_after_refresh(self.run_session)

    def on_unmount(self) -> None:
        # The app is closing (quit, or a test ends): the agent's thread must not outlive it.
        if not self.ended:
            if getattr(self.app, "_exception", None) is not None:  # the UI crashed: record it as such
                self.session.quit(ExitStatus.UI_ERROR, crash_message(self.app))
            else:
                self.session.quit()

    def on_resize(self, event: events.Resize) -> None:
        self._apply_layout(event.size.width)

    def _apply_layout(self, width: int) -> None:
        layout = self.session.config.ui.layout
        self.stacked = width < STACK_BELOW_COLUMNS if layout == "auto" else layout == "stacked"

    # --- the worker -----------------------------------------------------------------------

    @background(exclusive=True, group="session")
    def run_session(self) -> SessionResult:
        return self.session.run(self.controller.emit)

    def worker_done(self, worker: Worker[Any]) -> None:
        if worker.group != "session":
            return
        result = worker.result
        assert result is not None  # what a session's run returns
        self.result = result
        self._session_over(result.exit_code, result.exit_status, result.message, result.trajectory_path)

    def worker_failed(self, worker: Worker[Any]) -> bool:
        if worker.group != "session":
            return False
        error = worker.error
        message = f"{type(error).__name__}: {error}"
        self.notify(visible(message), title="The session failed", severity="error", timeout=30, markup=False)
        self._session_over(1, "error", message, None)
        return True

    def _session_over(self, code: int, status: str, message: str, path: str | None) -> None:
        self.finish()
        self.app.post_message(SessionFinished(code, status, message, path))
        if self.quitting:
            self.app.exit(code)

    # --- events from the agent ------------------------------------------------------------

    async def on_agent_events(self, message: AgentEvents) -> None:
        wait = self.controller.wait_before_drain()
        if wait == 0:
            await self._drain()
        elif wait is not None:
            self.set_timer(wait, self._drain)

    async def _drain(self) -> None:
        """Take everything the agent reported since the last drain: the state first, then the drawing."""
        self._draining = True
        try:
            with self.app.batch_update():  # one frame for the whole batch, not one per await in it
                for event in self.controller.drain():
                    self.apply(event)
                    draw = DRAW.get(type(event))
                    if draw is not None:
                        result = draw(self, event)
                        if result is not None:
                            await result
        finally:
            self._draining = False

    @property
    def caught_up(self) -> bool:
        """Everything the agent reported so far is drawn (nothing queued, no drain pending or running)."""
        return self.controller.idle and not self._draining

    async def _draw_session_started(self, event: ev.SessionStarted) -> None:
        if event.restored_messages:  # a resumed or forked trajectory: say what it continues
            if event.task:
                await self.transcript.add_note(event.task, "task", "task")
            await self.transcript.add_note(
                f"continuing from {event.restored_messages} recorded messages (the prompt inspector shows them)")

    async def _draw_mode(self, event: ev.ModeChanged) -> None:
        await self.transcript.add_note(f"mode: {event.previous} → {event.mode}")

    async def _draw_notice(self, event: ev.Notice) -> None:
        await self.transcript.add_note(event.text, event.level)
        if event.level != "info":
            self.notify(visible(event.text), severity="warning" if event.level == "warning" else "error", markup=False)

    async def _draw_session_ended(self, event: ev.SessionEnded) -> None:
        text = f"session ended: {event.exit_status}"
        if event.message:
            text += f" ({event.message})"
        if event.trajectory_path:
            text += f"\ntrajectory: {event.trajectory_path}"
        await self.transcript.add_note(text, "final" if event.exit_status == "Submitted" else "info")
        self.notify(visible(text) + "\nctrl+q quits", title="Done", markup=False, timeout=10)

    async def _draw_query_started(self, event: ev.QueryStarted) -> None:
        await self.transcript.begin_message(event.step)

    async def _draw_delta(self, event: ev.StreamDelta) -> None:
        transcript = self.transcript
        current = transcript.current or await transcript.begin_message(event.step)
        await current.append(event.kind, visible(event.text))  # a model's escape sequences are shown, not obeyed

    async def _draw_retrying(self, event: ev.QueryRetrying) -> None:
        transcript = self.transcript
        await transcript.discard_message()
        text = f"retry {event.attempt}/{event.attempts} in {event.wait_s:.0f} s: {event.error}"
        await transcript.add_note(text, "warning")

    async def _draw_query_finished(self, event: ev.QueryFinished) -> None:
        transcript = self.transcript
        current = transcript.current or await transcript.begin_message(event.step)
        await current.finish(event.message.text, event.message.extra.reasoning)
        transcript.current = None

    async def _draw_query_cancelled(self, event: ev.QueryCancelled) -> None:
        transcript = self.transcript
        transcript.current = None
        await transcript.add_note("query cancelled", "warning")

    async def _draw_action_proposed(self, event: ev.ActionProposed) -> None:
        state = "pending" if event.needs_confirmation else "proposed"
        await self.transcript.add_command(event.action_id, event.command, state)

    def _draw_action_decided(self, event: ev.ActionDecided) -> None:
        block = self._block(event.action_id)
        if block is not None:
            if event.decision == "edited":
                block.set_command(event.command)
            block.reason = event.reason
            block.state = event.decision

    def _draw_command_started(self, event: ev.CommandStarted) -> None:
        block = self._block(event.action_id)
        if block is not None:
            block.state = "running"
        self.output_pane.start(event.action_id, event.command)

    def _draw_output(self, event: OutputChunk) -> None:
        self.output_pane.append(event.action_id, event.text)

    def _draw_command_finished(self, event: ev.CommandFinished) -> None:
        result = event.result
        block = self._block(event.action_id)
        if block is not None:
            block.finished(result.returncode, result.duration_s, result.stopped)
        self.output_pane.finish(event.action_id, event.command, result)

    async def _draw_message(self, event: ev.MessageAdded) -> None:
        message = event.message
        transcript = self.transcript
        kind = message.message_type
        if kind == MessageType.TASK:
            await transcript.add_note(task_text(message), "task", "task")
        elif kind == MessageType.USER_MESSAGE and message.role == "user" and not message.extra.command:
            await transcript.add_note(message.text, "user", "you")
        elif kind == MessageType.INTERRUPT:
            await transcript.add_note("interrupted", "warning")
        elif kind == MessageType.FORMAT_ERROR:
            await transcript.add_note(message.text, "warning", "format error")
        elif kind == MessageType.FINAL:
            await transcript.add_note(message.text or "(empty submission)", "final", "submitted")

    # --- requests -------------------------------------------------------------------------

    def _draw_confirmation(self, event: ev.ConfirmationRequested) -> None:
        self._enter_approves = True
        block = self._block(event.action_id)
        if block is not None:
            prefix = command_prefix(event.command)  # what `a` will allow: shown before it is pressed
            block.ask(f"({prefix} …)" if prefix else "(this exact command)")
            # its first line in view: a long command's start is what could hide (again once it is
            # laid out at its new height, which a transcript that follows its end would scroll past)
            self.transcript.scroll_to_widget(block, top=True, animate=False)
            self.transcript.call_after_refresh(self.transcript.scroll_to_widget, block, top=True, animate=False)
        self.transcript.focus()

    def _draw_input(self, event: ev.InputRequested) -> None:
        # A follow-up waits for Enter or `i`: a stray key after the submission is not a task.
        if event.kind == "follow_up":
            self.transcript.focus()  # whatever had the keys before: not the line
        else:
            self._type_on_line()

    def _type_on_line(self) -> None:
        # At once, not `line.focus()` (a call_later): the keys typed next are already queued,
        # and an Enter among them must reach the line.
        self._enter_approves = False
        self.set_focus(self.input_line)

    def _draw_pause(self, event: ev.PauseRequested) -> None:
        def answer(decision: ev.PauseDecision | None) -> None:
            resolve(event.future, decision or ev.PauseDecision(kind="quit"))

        self.app.push_screen(PauseScreen(event.reason, event.detail, event.fit), answer)
        return None

    def _draw_compaction_review(self, event: ev.CompactionReview) -> None:
        def answer(text: str | None) -> None:
            resolve(event.future, text)

        self.app.push_screen(CompactionScreen(event.summary, event.messages, event.tokens_before, event.tokens_after,
                                              event.ledger),
                             answer)

    async def _draw_compaction_started(self, event: ev.CompactionStarted) -> None:
        await self.transcript.add_note(started_text(event), "info")

    async def _draw_compacted(self, event: ev.Compacted) -> None:
        text = compacted_text(event) + ("" if event.undone else " · ctrl+z undoes")
        await self.transcript.add_note(text, "info", "compaction")

    def _block(self, action_id: str) -> CommandBlock | None:
        return self.transcript.commands.get(action_id)

    # --- the person's actions --------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        typing = isinstance(self.app.focused, Input)
        if typing and action in LETTER_ACTIONS:  # its letter goes into the text; the footer stops offering it
            return False
        if action == "focus_input":
            return self.line_purpose is not None and not typing
        if action == "leave":  # one key to leave a session that has ended (issue 62)
            return self.line_purpose == "follow_up" or self.ended
        if action == "approve_enter" and not self._enter_approves:
            return False  # an Enter meant for something opened since the command was asked never approves it
        if action in CONFIRM_ACTIONS:
            return self.confirmation is not None and self.line_purpose not in ("reject", "edit")
        return True

    def _decide(self, decision: ev.Decision) -> None:
        if self.confirmation is None:
            return
        resolve(self.confirmation.future, decision)
        self.clear_confirmation()
        self.transcript.focus()

    def action_approve(self) -> None:
        self._decide(ev.Decision(kind="approve"))

    def action_approve_enter(self) -> None:
        self.action_approve()

    def action_leave(self) -> None:
        self.request_quit()

    def action_focus_input(self) -> None:
        if self.line_purpose is not None:
            self._type_on_line()

    def action_always_allow(self) -> None:
        self._decide(ev.Decision(kind="always_allow"))

    def action_reject(self) -> None:
        if self.answer_on_line("reject"):
            self._type_on_line()

    def action_edit(self) -> None:
        confirmation = self.confirmation
        if confirmation is not None and self.answer_on_line("edit"):
            self.input_line.fill(confirmation.command)
            self._type_on_line()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input is not self.input_line:
            return
        event.stop()
        purpose, text = self.line_purpose, event.value
        if purpose == "reject":
            self._decide(ev.Decision(kind="reject", comment=text.strip()))
        elif purpose == "edit":
            self._decide(ev.Decision(kind="edit", command=text))
        elif purpose is not None:
            request = self.take_input_request()
            if request is not None:
                resolve(request.future, text)
            self.transcript.focus()

    def action_cycle_mode(self) -> None:
        current = self.session.mode
        self.session.set_mode(MODES[(MODES.index(current) + 1) % len(MODES)])
        self.header(mode=self.session.mode)  # at once; the agent's ModeChanged follows

    def action_yolo(self) -> None:
        self.session.set_mode("yolo")
        self.header(mode=self.session.mode)

    def action_copy_or_interrupt(self) -> None:
        """Ctrl+C, as in the terminal agents: a selection (the mouse's, or the input line's) is
        copied; with nothing selected it interrupts, as Esc does."""
        selected = self.get_selected_text()
        if not selected and self.input_line.has_focus and not self.input_line.selection.is_empty:
            start, end = sorted(self.input_line.selection)
            selected = self.input_line.value[start:end]
        if selected:
            self.app.copy_to_clipboard(selected)
            self.notify(f"copied {len(selected):,} characters", timeout=2)
            return
        self.action_interrupt()

    def action_interrupt(self) -> None:
        """Esc closes the innermost thing first: the processors panel, a comment or an edit,
        the input line (its question stays asked), and only then interrupts the agent."""
        if self.processors_open:
            self.action_toggle_processors()
            return
        if self.line_purpose in ("reject", "edit"):  # Esc backs out of a comment or an edit
            self.leave_line()
            self.transcript.focus()
            return
        if self.input_line.has_focus and self.line_purpose is not None:
            self.transcript.focus()
            return
        if self.ended:
            return
        if self.confirmation is not None:
            block = self._block(self.confirmation.action_id)
            if block is not None:
                block.state = "interrupted"
            self.confirmation = None
        self.session.interrupt()

    def action_toggle_processors(self) -> None:
        self.processors_open = not self.processors_open
        self._enter_approves = False  # Enter applies values there: after it, only y approves
        if self.processors_open:  # its first switch, not the panel itself: keys then reach a switch or a value
            self.processors_panel.focus_first()
        else:
            self.transcript.focus()

    def on_processors_panel_changed(self, event: ProcessorsPanel.Changed) -> None:
        try:
            self.session.set_processors(event.processors)
        except Exception as exc:  # noqa: BLE001 - a processor the core refuses: say why, keep the old ones
            self.notify(f"{exc}", title="Processors not changed", severity="error", markup=False)
            return
        self.processor_labels = active_labels(self.session.processors)
        try:
            self.context = self.session.context_status()  # at once, before the agent's own update arrives
        except Exception as exc:  # noqa: BLE001 - reported to the person
            self.notify(f"{exc}", title="No prediction", severity="warning", markup=False)

    def action_compact(self) -> None:
        self.session.compact()
        self.notify("the history will be compacted before the next query", markup=False)

    def action_undo_compaction(self) -> None:
        self.session.compact(undo=True)
        self.notify("the last compaction will be undone before the next query", markup=False)

    def action_prompt_inspector(self) -> None:
        self._enter_approves = False
        try:
            preview = self.session.prompt_preview()
        except Exception as exc:  # noqa: BLE001 - reported to the person
            self.notify(f"{exc}", title="Cannot build the prompt", severity="error", markup=False)
            return
        self.app.push_screen(PromptInspector.next_prompt(preview, self.session.history))

    def action_subagents(self) -> None:
        """`S`: the subagent tree of the run so far (issue 65.4), from the record of the agent's
        traffic an ACP session keeps: a subagent is there once its first call is answered."""
        from swedeck.core.cost import Prices
        from swedeck.core.replay.document import open_document
        from swedeck.core.trajectory.errors import TrajectoryError

        from ..replay.subagent_screen import SubagentScreen  # on its key, not before the first frame

        path = Path(str(getattr(self.session, "trajectory_path", None) or ""))
        if not path.name or not path.is_file():
            self.notify("nothing recorded yet", severity="warning")
            return
        try:
            trajectory = open_document(path).trajectory()  # the live record as it is written, or its final file
        except TrajectoryError as error:
            self.notify(visible(str(error)), severity="error", markup=False)
            return
        config = getattr(self.session, "config", None)

        def prices() -> Prices:
            return Prices(config.model.prices if config is not None else {})

        def chosen(node: RunNode | None) -> None:
            if node is not None:
                self.notify(visible(f"swedeck replay {node.target}"), title=f"subagent {node.id}", markup=False)
        self.app.push_screen(SubagentScreen(trajectory, prices), chosen)

    def action_toggle_split(self) -> None:
        self.stacked = not self.stacked

    def on_command_block_selected(self, event: CommandBlock.Selected) -> None:
        self.output_pane.show(event.action_id)

    def request_quit(self) -> None:
        if self.ended:
            self.app.exit(self.result.exit_code if self.result else 0)
            return
        if self.state == ev.AgentState.RUNNING:
            self.app.push_screen(QuitScreen(), lambda yes: self._quit() if yes else None)
        else:
            self._quit()

    def _quit(self) -> None:
        self.quitting = True
        self.session.quit()
        # The agent notices a quit within a fraction of a second; never hang the terminal.
        self.set_timer(5, lambda: self.app.exit(self.result.exit_code if self.result else 0))


def _registry() -> dict[str, type]:
    from swedeck.core.processors import PROCESSORS

    return dict(PROCESSORS)


DRAW: dict[type, Draw] = {
    ev.SessionStarted: SessionScreen._draw_session_started,
    ev.ModeChanged: SessionScreen._draw_mode,
    ev.Notice: SessionScreen._draw_notice,
    ev.SessionEnded: SessionScreen._draw_session_ended,
    ev.QueryStarted: SessionScreen._draw_query_started,
    ev.StreamDelta: SessionScreen._draw_delta,
    ev.QueryRetrying: SessionScreen._draw_retrying,
    ev.QueryFinished: SessionScreen._draw_query_finished,
    ev.QueryCancelled: SessionScreen._draw_query_cancelled,
    ev.ActionProposed: SessionScreen._draw_action_proposed,
    ev.ActionDecided: SessionScreen._draw_action_decided,
    ev.CommandStarted: SessionScreen._draw_command_started,
    OutputChunk: SessionScreen._draw_output,
    ev.CommandFinished: SessionScreen._draw_command_finished,
    ev.MessageAdded: SessionScreen._draw_message,
    ev.ConfirmationRequested: SessionScreen._draw_confirmation,
    ev.InputRequested: SessionScreen._draw_input,
    ev.PauseRequested: SessionScreen._draw_pause,
    ev.CompactionReview: SessionScreen._draw_compaction_review,
    ev.CompactionStarted: SessionScreen._draw_compaction_started,
    ev.Compacted: SessionScreen._draw_compacted,
}
"""What each event adds to the transcript and the output pane (its effect on the state is
`SessionState.apply`): one line per event type."""
