"""B5 history processing (SPEC §12): 2,000 messages, every processor on.

An agent rebuilds the prompt once per step from a history that grew by two messages, so
the figure that matters is the rebuild after one more step ("warm": the processors and
token counts remember the messages they already saw). The first build of a history
nobody has seen ("cold", e.g. opening a long trajectory) is reported next to it.
"""

from __future__ import annotations

import time
from pathlib import Path

from swedeck.core.agent.context import ContextTracker
from swedeck.core.agent.prompt import PromptBuilder
from swedeck.core.processors import PROCESSORS

from .generate import Generator
from .result import Result, at_most
from .stats import ms, summary_ms

# Every registered processor, in an order where each one still has work to do: the ones that
# drop whole messages come last, so the others see all 2,000 (the worst case).
ORDER = ("default", "tag_tool_call_observations", "last_n_observations", "remove_regex", "worker", "manager",
         "context_filter", "cache_control", "orchestrator")
# Parameters for processors that need them; every other one runs with its defaults.
PARAMS = {
    "last_n_observations": {"n": 5},
    "tag_tool_call_observations": {"command_regex": r"^git diff"},
    "remove_regex": {"remove": [r"<diff>.*</diff>", r"ValueError"], "keep_last": 2},
    "context_filter": {"num_invocations_to_keep": 20},
}


def all_processors() -> list[dict]:
    kinds = [kind for kind in ORDER if kind in PROCESSORS] + [kind for kind in PROCESSORS if kind not in ORDER]
    return [{"type": kind, **PARAMS.get(kind, {})} for kind in kinds]


def run(quick: bool, workdir: Path) -> Result:
    size = 2000
    rebuilds = 20 if quick else 100
    generator = Generator(mean_output_chars=2000)
    stream = generator.messages(steps=(size - 2) // 2 + rebuilds + 1)
    history = [next(stream) for _ in range(size)]
    chain = PromptBuilder(all_processors())  # the agent's own path: recorded compactions, then the processors

    start = time.perf_counter()
    cold = chain.build(history)
    cold_build = time.perf_counter() - start
    tracker = ContextTracker(window=None)
    start = time.perf_counter()
    tracker.predict(chain.build(history).messages)
    cold_estimate = time.perf_counter() - start

    builds, estimates = [], []
    for _ in range(rebuilds):
        history += [next(stream), next(stream)]  # one more step: action and observation
        start = time.perf_counter()
        chain.build(history)
        builds.append(time.perf_counter() - start)
        start = time.perf_counter()
        tracker.predict(chain.build(history).messages)
        estimates.append(time.perf_counter() - start)

    figures = {
        "messages": size,
        "processors": [processor["type"] for processor in chain.describe()],
        "prompt_messages": len(cold.messages),
        "errors": cold.errors,
        **summary_ms(builds, "build"),
        **summary_ms(estimates, "estimate"),
        "cold_build_ms": ms(cold_build),
        "cold_estimate_ms": ms(cold_estimate),
        "rebuilds": rebuilds,
    }
    return Result("B5", "history processing", figures,
                  goal={"build_median_ms": at_most(10), "estimate_median_ms": at_most(20)},
                  notes={"build": "rebuild after one more step (the agent's case), medians over `rebuilds`",
                         "estimate": "the meter's next ≈ N: build the prompt, count it (agent.context.ContextTracker.predict)",
                         "cold": "first build/estimate of a history no cache has seen (tokenizes everything)"})
