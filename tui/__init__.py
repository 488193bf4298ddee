"""swedeck's front ends (Textual). Importing this package sets the rate of Textual's frames
(a swedeck app, when it starts, also lets Textual's rendered lines die without a collection:
`strip_cycles`, applied by `kit.app_base.ViewApp`, not at import, so a test or a tool that
imports a widget gets Textual as it is).

Textual paints a change at its screen's next update tick, on a grid of `1 / TEXTUAL_FPS`
seconds (60 a second unless set): a key was handled in 1-2 ms and then waited up to 17 ms
(8 on average) before its frame began (issue 49: keypress to paint p99 <= 50 ms). swedeck's
apps run on a grid of `FRAMES_PER_SECOND`, so a key's frame begins within 4 ms.

That makes no more frames than before: Textual paints only when something changed, the live
view takes the agent's events 12 times a second (`live/controller.py`), and Textual's
animations keep their own 60 a second. A person's own `TEXTUAL_FPS` is kept. The variable is
set only while Textual reads it (`textual.constants`, once per process), so the commands a
session runs never see it; a process that imported Textual before this package keeps
Textual's rate.
"""

from __future__ import annotations

import os
import sys

FRAMES_PER_SECOND = 240
FPS_VARIABLE = "TEXTUAL_FPS"


def _set_frame_rate() -> None:
    if FPS_VARIABLE in os.environ or "textual.constants" in sys.modules:
        return
    os.environ[FPS_VARIABLE] = str(FRAMES_PER_SECOND)
    try:
        import textual.constants  # noqa: F401  (reads the variable, once)
    finally:
        del os.environ[FPS_VARIABLE]


_set_frame_rate()
