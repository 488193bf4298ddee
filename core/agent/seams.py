"""What each of the agent loop's collaborators may see of the agent (SPEC §6).

`gate`, `commands`, `endings` and `compaction` are functions of an agent, but each needs a
few of its parts, not the whole `Agent`: the protocols below name those parts, and the
type checker holds each module to its own. What they decide for the agent they return as a
`changes.Change`, which the agent applies: the agent's own fields are read-only here.
`Agent` has them all (it is checked where it passes itself). Nothing here imports the
agent, so the loop has no import cycle.
"""

from __future__ import annotations

from typing import Any, Protocol

from .. import events as ev
from ..config import SwedeckConfig
from ..environments.base import Environment
from ..messages import Action, Message
from ..models.base import Model
from .context import ContextTracker
from .control import Control
from .person import PersonChannel
from .prompt import PromptBuilder
from .transcript import Transcript


class Asks(Protocol):
    """A command waiting for the person (`gate`): who to ask, and how the answer is worded."""

    config: SwedeckConfig
    control: Control
    person: PersonChannel

    @property
    def mode(self) -> ev.Mode: ...

    def emit(self, event: ev.Event) -> None: ...

    def template_vars(self) -> dict[str, Any]: ...


class Decides(Protocol):
    """The gate, as the commands use it (`gate.Gate`)."""

    def decide(self, agent: Asks, action: Action, action_id: str, step: int,
               unrun: list[Action]) -> tuple[str, str]: ...


class Runs(Asks, Protocol):
    """A step's commands (`commands`): the gate, the environment, and the history they answer in."""

    env: Environment

    @property
    def gate(self) -> Decides: ...
    transcript: Transcript
    step: int

    @property
    def turn(self) -> int: ...

    @property
    def history(self) -> list[Message]: ...

    def update_context(self) -> None: ...


class Compacts(Protocol):
    """A compaction (`compaction`): the history, its prompt and meter, and the model that summarizes."""

    config: SwedeckConfig
    control: Control
    person: PersonChannel
    transcript: Transcript
    prompts: PromptBuilder
    context: ContextTracker
    model: Model

    @property
    def window(self) -> int | None: ...

    @property
    def step(self) -> int: ...

    @property
    def compaction_quiet_until(self) -> int: ...

    @property
    def interactive(self) -> bool: ...

    @property
    def mode(self) -> ev.Mode: ...

    @property
    def history(self) -> list[Message]: ...

    def emit(self, event: ev.Event) -> None: ...

    def context_status(self) -> ev.ContextStatus: ...

    def update_context(self) -> None: ...

    def progress(self) -> None: ...

    def summary_model(self, name: str) -> Model: ...


class Ends(Compacts, Protocol):
    """How a step's end is answered (`endings`): the person's say, a compaction or a processor
    change that fits the window, the next task (returned as a `Change`)."""

    @property
    def fit_applied(self) -> bool: ...

    @property
    def submission(self) -> str: ...
