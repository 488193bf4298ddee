"""The one place litellm is imported (SPEC §4.6): lazily, quietly, offline cost map.

`import litellm` takes seconds, so nothing on the UI's start path, `replay`, `prompt`,
`watch` or `config` may trigger it. A live session calls `preload_litellm()` from a
background thread after its first frame; the first query then finds it loaded.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from ..startup.gc_tuning import freeze_permanent_objects

_lock = threading.Lock()
_module: Any = None
_LOGGERS = ("LiteLLM", "LiteLLM Proxy", "LiteLLM Router", "litellm", "httpx", "openai")


def litellm() -> Any:
    """The litellm module, imported once with its banners and network look-ups off."""
    global _module
    if _module is not None:
        return _module
    with _lock:
        if _module is None:
            # Without this litellm downloads its price map at import: slow, and fails offline.
            os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            import litellm as module

            module.suppress_debug_info = True
            module.set_verbose = False  # type: ignore[attr-defined]  # read by litellm, not exported
            # swedeck keeps its own usage and cost; litellm's per-stream success logging runs
            # in a thread pool with a fresh event loop each time and starves the UI thread of
            # the GIL (bench B1: long stalls while streaming; docs/performance.md).
            module.disable_streaming_logging = True
            module.drop_params = True  # providers that lack a parameter (stream_options...) get it dropped
            for name in _LOGGERS:
                logging.getLogger(name).setLevel(logging.ERROR)
            _module = module
            freeze_permanent_objects()  # litellm's module graph lives as long as we do
    return _module


def preload_litellm() -> None:
    """Import litellm now (call from a background thread so the first query does not wait)."""
    litellm()
