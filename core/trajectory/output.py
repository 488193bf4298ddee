"""What a command printed, as the output pane shows it (SPEC §11.1), apart from what the model
was sent (the observation, which the prompt inspector shows as it is).

swedeck and mini-swe-agent v2 record the output itself (`extra.raw_output`); older files
have only the observation: mini-swe-agent's `<returncode>N</returncode><output>…</output>`
wrapper is taken apart, anything else (SWE-agent's observation) is the output as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..messages import Message

_WRAPPED = re.compile(r"\A\s*<returncode>(-?\d+)</returncode>\s*<output>\n?(.*?)</output>\s*\Z", re.DOTALL)


@dataclass(frozen=True)
class CommandOutput:
    text: str
    returncode: int | None


def command_output(message: Message) -> CommandOutput:
    extra = message.extra
    if extra.raw_output is not None:
        return CommandOutput(extra.raw_output, extra.returncode)
    wrapped = _WRAPPED.match(message.text)
    if wrapped:
        code = extra.returncode if extra.returncode is not None else int(wrapped.group(1))
        return CommandOutput(wrapped.group(2), code)
    return CommandOutput(message.text, extra.returncode)
