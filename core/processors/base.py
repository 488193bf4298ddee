"""The shape every history processor has (SPEC §7).

A processor is a small frozen pydantic model with a `type` discriminator. Calling it with
a history returns the prompt history: a new list. Messages are immutable, so a processor
that changes a message builds a new one (`message.updated(...)`) and the stored
history is never touched. Unchanged messages are passed through as the same objects, which
keeps prompt builds cheap and the per-message token counts cached.
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Annotated, Any, ClassVar, TypeVar, cast

from pydantic import AfterValidator, BaseModel, ConfigDict
from pydantic.fields import FieldInfo

from ..messages import Message, MessageType

T = TypeVar("T")

_derived: OrderedDict[tuple[Hashable, int], tuple[Message, Any]] = OrderedDict()
_derived_lock = threading.Lock()
_DERIVED_SIZE = 200_000


def derived(key: Hashable, message: Message, build: Callable[[Message], T]) -> T:
    """`build(message)`, remembered per message object and `key` (the transformation and its
    parameters). Rebuilding a prompt then returns the very same changed copies as last time,
    so later processors and the per-message token counts hit their caches too."""
    slot = (key, id(message))
    hit = _derived.get(slot)
    if hit is not None and hit[0] is message:
        return cast(T, hit[1])
    value = build(message)
    with _derived_lock:
        _derived[slot] = (message, value)
        if len(_derived) > _DERIVED_SIZE:
            _derived.popitem(last=False)
    return value


class ProcessorError(Exception):
    """A processor could not do its work; the chain leaves the prompt as it was and reports this."""


class Processor(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    """Not `use_attribute_docstrings`: it reads every processor's source when the class is made
    (20 ms of every start, bench B3); `field_docs` reads the field docstrings when the panel asks."""

    type: str
    enabled: bool = True
    """Switched off processors stay in the config (and in the UI's panel) but do nothing."""

    shrink_options: ClassVar[tuple[dict[str, Any], ...]] = ()
    """Settings that make the prompt smaller, from the one that drops the least to the one
    that drops the most: what a prompt over the context window is offered
    (`agent.context.smallest_fit`). Empty: this processor is never offered."""

    def label(self) -> str:
        return label(self.type, self.model_dump())

    def __call__(self, history: list[Message]) -> list[Message]:
        raise NotImplementedError


def active_labels(processors: list[Any]) -> list[str]:
    """What the meter names: the label of every enabled processor but `default`."""
    return [p.label() for p in processors if getattr(p, "enabled", True) and p.type != "default"]


def label(type_name: str, settings: dict[str, Any]) -> str:
    """`last_n_observations(n=5, polling=1)`: a processor as the meter and the fit offer name it."""
    inner = ", ".join(f"{key}={value}" for key, value in settings.items()
                      if key not in ("type", "enabled") and value not in (None, [], {}, ()))
    return f"{type_name}({inner})" if inner else type_name


@functools.cache
def field_docs(cls: type[BaseModel]) -> dict[str, str]:
    """The docstring under each field of `cls` and its bases (what the processors panel shows
    as each setting's tooltip), read from their source when first asked, not when the class
    is made (pydantic's `use_attribute_docstrings` costs every start 20 ms)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        if not (isinstance(klass, type) and issubclass(klass, BaseModel)) or klass is BaseModel:
            continue
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(klass)))
        except (OSError, TypeError, SyntaxError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in zip(body, body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def parameters(cls: type[BaseModel]) -> dict[str, FieldInfo]:
    """A processor type's own settings: its fields but the `type` tag and the `enabled` switch."""
    return {name: info for name, info in cls.model_fields.items() if name not in ("type", "enabled")}


def starting_value(info: FieldInfo) -> Any:
    """What a setting starts at when a person switches its processor on: the field's first
    example (each processor gives one where no default would do anything), else its default."""
    return info.examples[0] if info.examples else info.default


def _tag_set(tags: tuple[str, ...]) -> tuple[str, ...]:
    # Sorted and unique so the config (and so its hash) does not depend on how YAML listed them.
    return tuple(sorted(set(tags)))


TagSet = Annotated[tuple[str, ...], AfterValidator(_tag_set)]
"""A set of tags as a sorted tuple: YAML lists in, canonical JSON out."""


def is_system(message: Message) -> bool:
    return message.role == "system" or message.extra.message_type is MessageType.SYSTEM


def last_task_index(history: list[Message]) -> int | None:
    """Where the current turn starts (§6.3): the last `task` message."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].extra.message_type is MessageType.TASK:
            return index
    return None
