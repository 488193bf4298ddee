"""A toy trajectory format, as a new reader would be written: one file, and one line in
`readers.READERS` (the test adds the line). A `.toy.jsonl`'s first line is `{"toy": 1}`; each
later line is `{"cmd": …, "out": …}`: one model call that ran `cmd` and read `out`."""

from __future__ import annotations

from collections.abc import Mapping

from swedeck.core.messages import MessageType
from swedeck.core.trajectory.model import Fidelity, Trajectory, TrajectoryFormat, TrajectoryInfo
from swedeck.core.trajectory.readers import chat
from swedeck.core.trajectory.readers.source import Source, sniff_lines

FORMAT: TrajectoryFormat = "toy"
BRANCHES = False


def accepts(source: Source) -> bool:
    if source.folder or source.data:
        return False
    first = source.first_line
    return isinstance(first, Mapping) and first.get("toy") == 1


def sniff(name: str, head: bytes, text: str) -> bool:
    return sniff_lines(accepts, name, text)


def read(source: Source) -> Trajectory:
    entries = [chat.Entry("user", "play the toy", MessageType.TASK)]
    for number, record in source.json_lines():
        if number == 1 or not isinstance(record, Mapping):
            continue
        call = chat.call(f"call-{number}", "bash", {"command": str(record.get("cmd") or "")})
        entries.append(chat.assistant("", [call]))
        entries.append(chat.Entry("tool", str(record.get("out") or ""), MessageType.OBSERVATION,
                                  {"raw_output": str(record.get("out") or "")}, tool_call_id=f"call-{number}"))
    fidelity = Fidelity(prompt="reconstructed", parts={"messages": "reconstructed"})
    return chat.trajectory(source, FORMAT, entries, TrajectoryInfo(), fidelity)
