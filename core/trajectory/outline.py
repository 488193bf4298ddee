"""A JSON document read in outline: its top level at once, each value when a reader asks for it.

A 24 MB trajectory is mostly its message list, and the replay's first screen shows one step
of it. msgspec passes over a value without building it (checking its syntax) at about a
tenth of what building it costs, so a document whose top is an object is read as an
`Outline`: its keys, and each value parsed when first read. A list of records (the
messages) comes as `RawRecords`: each record parsed when it is read, and what the reader
needs of every record up front (`heads`: by default its role and the step marks of its
`extra`; SWE-agent's reader asks for more) parsed at once, as a `Part`: a msgspec struct of
the fields the reader names, the rest passed over, read as the record's `dict` would be (a
reader's code reads a head and a record parsed whole the same way).

The values are `parse.loads`'s, as when the whole document is parsed: whatever msgspec
refuses to pass over (NaN, a lone UTF-16 surrogate) makes the document a plain one, parsed
whole, so a file reads the same either way, only sooner.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

import msgspec

from .lazy import LazySequence
from .parse import loads


class Part(msgspec.Struct, gc=False):
    """Part of a record read as a struct (the fields a reader names, the rest passed over), read
    as the record's `dict` would be: a `Mapping` of the fields the record holds (a field it does
    not hold is `UNSET`: missing, not None), so `get`, `in` and `[]` say what they say of the
    `dict`. Not followed by the collector: a head holds no cycle, and a million are made and
    dropped. A field is never named as a `Mapping` method (`get`, `items`, `keys`, `values`)."""

    def get(self, key: str, default: Any = None) -> Any:
        value = getattr(self, key, msgspec.UNSET)
        return default if value is msgspec.UNSET else value

    def __getitem__(self, key: str) -> Any:
        value = getattr(self, key, msgspec.UNSET)
        if value is msgspec.UNSET:
            raise KeyError(key)
        return value

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and getattr(self, key, msgspec.UNSET) is not msgspec.UNSET

    def __iter__(self) -> Iterator[str]:
        return (name for name in self.__struct_fields__ if getattr(self, name) is not msgspec.UNSET)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def keys(self) -> KeysView[str]:
        return KeysView(self)

    def items(self) -> ItemsView[str, Any]:
        return ItemsView(self)

    def values(self) -> ValuesView[Any]:
        return ValuesView(self)


Mapping.register(Part)


class HeadExtra(Part):
    message_type: Any = msgspec.UNSET
    is_demo: Any = msgspec.UNSET


class Head(Part):
    """What a reader needs of every record before it builds any (other keys are passed over)."""

    role: Any = msgspec.UNSET
    extra: HeadExtra | None | msgspec.UnsetType = msgspec.UNSET


_object = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode
_raws = msgspec.json.Decoder(list[msgspec.Raw]).decode
_head_lists: dict[type, Any] = {}
_OBJECT_START = re.compile(r"[ \t\r\n]*\{")
_OBJECT_START_BYTES = re.compile(rb"[ \t\r\n]*\{")
_LIST_START = re.compile(r"[ \t\r\n]*\[")
_LIST_START_BYTES = re.compile(rb"[ \t\r\n]*\[")


def outline(text: str | bytes | bytearray | mmap.mmap | msgspec.Raw, lists: bool = False) -> Any:
    """The document in `text`: an `Outline` when its top is an object msgspec reads, with
    `lists` a `RawList` when it is a list, else the parsed value (raises ValueError when it is
    not JSON)."""
    is_str = isinstance(text, str)
    if (_OBJECT_START.match(text) if is_str else _OBJECT_START_BYTES.match(text)):  # type: ignore[arg-type]
        try:
            return Outline(_object(text))
        except msgspec.MsgspecError:  # damaged, or what only `json` reads: parsed whole, as before
            pass
    elif lists and (_LIST_START.match(text) if is_str else _LIST_START_BYTES.match(text)):  # type: ignore[arg-type]
        try:
            return RawList(text)
        except msgspec.MsgspecError:
            pass
    return loads(text)


def plain(value: Any) -> Any:
    """`value` with an outline's values all parsed (a `dict`, a `list`), for readers that keep records whole."""
    if isinstance(value, Outline):
        return dict(value.items())
    return list(value) if isinstance(value, RawList) else value


class Outline(Mapping[str, Any]):
    """A JSON object whose values are parsed when first read (and then kept)."""

    __slots__ = ("_raw", "_values")

    def __init__(self, raw: dict[str, msgspec.Raw]):
        self._raw = raw
        self._values: dict[str, Any] = {}

    def __getitem__(self, key: str) -> Any:
        if key in self._values:
            return self._values[key]
        value = self._values[key] = loads(self._raw[key])
        return value

    def __contains__(self, key: object) -> bool:
        return key in self._raw

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def outline_at(self, key: str) -> Any:
        """The value at `key` (None when missing), an object read in outline in its turn: a
        nested record whose parts are read apart (an Inspect sample's `events_data`)."""
        if key not in self._raw or key in self._values:
            return self.get(key)
        return outline(self._raw[key])

    def records(self, key: str, head: type = Head) -> Any:
        """The value at `key` (None when missing); a list of objects as `RawRecords` whose
        heads are read as `head` (a `Part` of what the reader needs up front)."""
        if key not in self._raw or key in self._values:
            return self.get(key)
        try:
            return RawRecords(self._raw[key], head)
        except msgspec.MsgspecError:  # not a list of objects (the reader says so), or one only `json` reads
            return self[key]


class RawRecords(LazySequence[Any]):
    """A JSON list of objects, each parsed when it is read (a new `dict` each time)."""

    noun = "record"

    def __init__(self, raw: msgspec.Raw, head: type = Head, items: list[msgspec.Raw] | None = None):
        """`items`: the list's items, where they were split already (`RawList`)."""
        if head not in _head_lists:
            _head_lists[head] = msgspec.json.Decoder(list[head]).decode  # type: ignore[valid-type]
        self.heads: list[Any] = _head_lists[head](raw)
        """Each record's `head` (by default its role and step marks); raises a msgspec error
        when an item is not an object, or a head's part is not of its type."""
        self._items = items if items is not None else _raws(raw)

    def __len__(self) -> int:
        return len(self._items)

    def _item(self, index: int) -> Any:
        return loads(self._items[index])

    def outline(self, index: int) -> Any:
        """Record `index` read in outline (its values parsed when read)."""
        return outline(self._items[index])


class RawList(LazySequence[Any]):
    """A document whose top is a list (OpenHands' events, mini-swe-agent's bare message list),
    each item parsed when it is read (a new value each time)."""

    noun = "item"

    def __init__(self, raw: Any):
        self.raw = raw
        self._items = _raws(raw)

    def __len__(self) -> int:
        return len(self._items)

    def _item(self, index: int) -> Any:
        return loads(self._items[index])

    def records(self, head: type = Head) -> Any:
        """The items as `RawRecords` with `head`s, or parsed (a `list`) when they are not all
        objects `head` reads (the reader says what is wrong with them)."""
        try:
            return RawRecords(self.raw, head, self._items)  # the items split once
        except msgspec.MsgspecError:
            return list(self)


def records_at(document: Mapping[str, Any], key: str, head: type = Head) -> Any:
    """`document[key]` (None when missing); from an outline, a list of objects as `RawRecords`."""
    return document.records(key, head) if isinstance(document, Outline) else document.get(key)


def heads(records: Any) -> Any:
    """What the readers need of every record: `RawRecords.heads`, or the parsed records themselves."""
    return records.heads if isinstance(records, RawRecords) else records
