"""A litellm whose import never ends, and waits inside pydantic-core's Rust code.

On `PYTHONPATH` in a test's `swedeck` process only: a run that ends while this import is
under way in one of its threads (the session's context-window look-up begins one) must leave
with its own exit code. Python 3.11 stops such a thread when the interpreter finalizes, and
stopping it inside Rust code crashes the process (SIGSEGV or SIGABRT), as a real litellm
import can, rarely, when a run ends within the seconds it takes."""

import time

from pydantic import BaseModel, field_validator


class _Stuck(BaseModel):
    value: int

    @field_validator("value")
    @classmethod
    def _wait(cls, value: int) -> int:  # called by pydantic-core's validator, in Rust
        while True:
            time.sleep(0.05)


_Stuck(value=1)
