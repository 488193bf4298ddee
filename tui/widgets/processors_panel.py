"""The history processors side panel (SPEC §10.1, §7).

Every registered processor type has a row: an on/off switch and one input per
parameter. Configured processors show their values and keep their order; the others are
off with their defaults and join at the end when switched on. Each change is validated
by the processor's own pydantic model and posted as `ProcessorsPanel.Changed` with the
full new list; an invalid value marks its input and changes nothing.
"""

from __future__ import annotations

import json
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticUndefined
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widgets import Input, Label, Static, Switch

from swedeck.core.config import parse_value as parse_config_value
from swedeck.core.processors.base import field_docs, parameters, starting_value

from .text import literal


def show_value(value: Any) -> str:
    if value is PydanticUndefined:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value) if isinstance(value, (list, dict, tuple)) else yaml.safe_dump(value).strip()\
        .removesuffix("...").strip()


def parse_value(text: str) -> Any:
    """A typed field as the config reads a `-c` value (`config.parse_value`); empty is unset."""
    return None if text.strip() == "" else parse_config_value(text)


class ProcessorRow(Vertical):
    DEFAULT_CSS = """
    ProcessorRow { height: auto; padding: 0 0 1 0; border-bottom: solid $panel; }
    ProcessorRow Horizontal { height: auto; }
    ProcessorRow .name { padding: 1 1 0 1; text-style: bold; }
    ProcessorRow .param { height: auto; }
    ProcessorRow .param Label { width: 1fr; padding: 0 1; color: $text-muted; }
    ProcessorRow .param Input { width: 1fr; }
    ProcessorRow Input.-invalid { border: tall $error; }
    ProcessorRow .error { color: $error; padding: 0 1; display: none; }
    ProcessorRow .error.-shown { display: block; }
    """

    def __init__(self, type_name: str, cls: type[BaseModel], current: BaseModel | None) -> None:
        super().__init__(classes=f"processor-{type_name}")
        self.type_name = type_name
        self.cls = cls
        self.current = current

    def compose(self) -> ComposeResult:
        enabled = bool(self.current is not None and getattr(self.current, "enabled", True))
        with Horizontal():
            yield Switch(value=enabled)
            yield Label(literal(self.type_name), classes="name")
        docs = field_docs(self.cls)
        for name, info in parameters(self.cls).items():
            if self.current is not None:
                value = getattr(self.current, name)
            else:
                value = starting_value(info)
            with Vertical(classes="param"):  # the name on its own line: never cut
                yield Label(literal(name))
                # focusing a value selects it: typing replaces it (`1`, not `15`)
                field = Input(show_value(value), name=name, classes="param-input", select_on_focus=True)
                field.tooltip = docs.get(name)  # what the setting does (its docstring), on hover
                yield field
        yield Static(classes="error", markup=False)

    @property
    def enabled(self) -> bool:
        return self.query_one(Switch).value

    def build(self) -> BaseModel:
        """The processor as the row describes it; raises ValueError with a readable reason."""
        data: dict[str, Any] = {"type": self.type_name, "enabled": self.enabled}
        for field in self.query(".param-input").results(Input):
            value = parse_value(field.value)
            if value is not None and field.name:
                data[field.name] = value
        error = self.query_one(".error", Static)
        try:
            built = self.cls.model_validate(data)
        except ValidationError as exc:
            reason = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            error.update(literal(reason))
            error.add_class("-shown")
            bad = {str(e["loc"][0]) for e in exc.errors() if e["loc"]}
            for field in self.query(".param-input").results(Input):
                field.set_class(field.name in bad, "-invalid")
            raise ValueError(reason) from None
        error.remove_class("-shown")
        for field in self.query(".param-input").results(Input):
            field.remove_class("-invalid")
        return built


class ProcessorsPanel(VerticalScroll):
    BINDINGS = [Binding("up", "app.focus_previous", "Previous", show=False, id="processors_previous"),
                Binding("down", "app.focus_next", "Next", show=False, id="processors_next")]
    """↑/↓ move between the switches and values, as Tab and Shift+Tab do."""
    DEFAULT_CSS = """
    ProcessorsPanel { dock: right; width: 48; background: $surface; border-left: solid $primary; display: none; }
    ProcessorsPanel.-open { display: block; }
    ProcessorsPanel .title { padding: 0 1; text-style: bold; color: $primary; }
    ProcessorsPanel .hint { padding: 0 1; color: $text-muted; }
    """

    open: var[bool] = var(False, toggle_class="-open")
    """Shown (docked at the right); bound to the session state's `processors_open`."""

    class Changed(Message):
        def __init__(self, processors: list[BaseModel]) -> None:
            super().__init__()
            self.processors = processors

    def __init__(self, registry: dict[str, type[BaseModel]], configured: list[BaseModel], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.registry = registry
        self.configured = list(configured)

    def compose(self) -> ComposeResult:
        yield Label("History processors", classes="title")
        yield Static(literal("↑/↓ move, Space switches, type a value and Enter applies; p closes. "
                             "The meter's next ≈ updates at once."),
                     classes="hint")
        configured_types = [getattr(p, "type", "") for p in self.configured]
        for processor in self.configured:
            name = str(getattr(processor, "type", ""))
            cls = self.registry.get(name, type(processor))
            yield ProcessorRow(name, cls, processor)
        for name, cls in self.registry.items():
            if name not in configured_types:
                yield ProcessorRow(name, cls, None)

    def focus_first(self) -> None:
        """The first switch takes the keys (the panel itself would take them and do nothing with
        them: a digit typed went nowhere, issue 62)."""
        switches = self.query(Switch)
        if switches:
            switches.first().focus()
        else:
            self.focus()

    def processors(self) -> list[BaseModel]:
        """The new list: every enabled row, plus configured ones switched off (kept, disabled)."""
        built: list[BaseModel] = []
        for row in self.query(ProcessorRow).results(ProcessorRow):
            if row.enabled or row.current is not None:
                built.append(row.build())
        return built

    def _apply(self) -> None:
        try:
            processors = self.processors()
        except ValueError:
            return
        self.post_message(self.Changed(processors))

    def on_switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        self._apply()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._apply()
