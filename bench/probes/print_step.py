"""`swedeck replay FILE --print --step -1` run in this process (the real command line, its
output thrown away), then this process's own peak RSS (`memory.peak_rss_mb`) as the JSON
object on stdout's last line. Its time is the caller's: from this process's start to its end.

    python -m bench.probes.print_step FILE
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

from .memory import peak_rss_mb


def main() -> None:
    from swedeck.cli import entry

    sys.argv = ["swedeck", "replay", sys.argv[1], "--print", "--step", "-1"]
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        try:
            entry()
        except SystemExit as done:
            if done.code:
                raise
    print(json.dumps({"peak_rss_mb": peak_rss_mb()}))


if __name__ == "__main__":
    main()
