"""Any trajectory as one offline HTML page (SPEC §16): the step list, each step's thought,
commands and output (long outputs folded), the token curve with its axes, the meter's
figures per step, the fidelity summary, search and keyboard navigation (←/→, as in replay).

Everything is inline: the page loads nothing and sends nothing (its Content-Security-Policy
allows no network address at all, and only its own script, by hash). The run's text is
data, never markup: it travels as JSON in a `<script type="application/json">` block with
`<`, `>` and `&` escaped, and the page's script puts it in with `textContent` only, so a
`</script>`, an event-handler attribute, a `javascript:` link or an entity in a model's
answer or a command's output is shown as the characters it is. Control characters and
invisible or direction-changing ones are drawn as marks (`core.text.visible`), and token
shapes, URL passwords and credential headers are masked as when swedeck writes a
trajectory; where that changes the submission (a patch), the page says so, and the loss
report does too: the page is for reading, the trajectory file keeps every byte.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ..cost import Prices, RunningCost, StepCost, money
from ..meter import describe, meter_level, model_window, step_meter
from ..redact import Redactor
from ..replay.document import LoadedDocument, ReplayDocument
from ..replay.step_text import model_text, output_text
from ..replay.token_curve import token_curve
from ..text import visible
from ..trajectory.fidelity import summary, summary_lines
from ..trajectory.model import Trajectory

PAGE_VERSION = "swedeck-html/1"


@dataclass
class Page:
    data: bytes
    losses: list[str] = field(default_factory=list)


def to_html(trajectory: Trajectory, steps: tuple[int, int] | None = None, prices: Prices | None = None) -> Page:
    """The page for the trajectory's steps `A..B` (all of them by default)."""
    losses: list[str] = []
    return Page(b"".join(html_chunks(trajectory, steps or (1, len(trajectory.steps)), losses, prices)), losses)


def html_chunks(trajectory: Trajectory, steps: tuple[int, int], losses: list[str],
                prices: Prices | None = None) -> Iterator[bytes]:
    """The page's bytes, a step at a time (issue 49: a long run's page is never whole in
    memory): the page up to its data, the run's record with its steps as they are made, then
    the rest. `losses` is filled at the end (what was masked is known then). Each step's
    dollars priced with `prices` (litellm's map where None, issue 65)."""
    document = LoadedDocument(trajectory)
    first, last = steps
    masker = _Masker()
    priced = RunningCost(prices or Prices(), trajectory.info.model_name)
    curve, costs = {}, {}
    for point in token_curve(document):
        curve[point.step] = point.tokens
        costs[point.step] = priced.add(point.usage, point.model)
    record = _record(trajectory, document, masker)
    record["fidelity"].append(masker.text(_cost_line(costs, first, last)))
    before, after = _page(record).split(_DATA)
    yield _encoded(before + _data_block(json.dumps(record, ensure_ascii=False)[:-1] + ', "steps": ['))
    for number, step in enumerate(_steps(trajectory, document, first, last, masker, curve, costs)):
        yield _encoded(_data_block((", " if number else "") + json.dumps(step, ensure_ascii=False)))
    losses.extend(masker.losses())
    yield _encoded(_data_block('], "losses": ' + json.dumps(losses, ensure_ascii=False) + "}") + after)


def _encoded(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")


class _Masker:
    """Text as the page shows it: secrets masked, controls and invisible characters marked."""

    def __init__(self) -> None:
        self.redactor = Redactor()
        self.masked = 0
        self.submission_masked = False

    def text(self, text: str) -> str:
        return visible(self._masked(text))

    def submission(self, text: str) -> str:
        masked = self._masked(text)
        self.submission_masked = self.submission_masked or masked != text
        return visible(masked)

    def _masked(self, text: str) -> str:
        masked = self.redactor.text(text)
        if masked != text:
            self.masked += 1
        return masked

    def losses(self) -> list[str]:
        out = []
        if self.masked:
            out.append(f"texts with a secret masked on the page (token shapes, URL passwords, credential headers): "
                       f"{self.masked}")
        if self.submission_masked:
            out.append("the submission is shown with a secret masked: the page's copy of the patch differs from the "
                       "run's (the trajectory file keeps it byte for byte)")
        return out


def _cost_line(costs: dict[int, StepCost], first: int, last: int) -> str:
    """The page's cost: its steps' dollars, the whole run's where the page holds part of it."""
    shown = [costs[number] for number in range(first, last + 1) if number in costs]
    dollars = sum(cost.dollars or 0.0 for cost in shown)
    unpriced = sorted({cost.unpriced for cost in shown if cost.unpriced})
    line = f"cost: {money(dollars)}" + (f" (the run's: {money(costs[max(costs)].so_far)})"
                                        if costs and (first, last) != (1, max(costs)) else "")
    return line + (f" · unpriced (not in it): {', '.join(unpriced)}" if unpriced else "")


def _steps(trajectory: Trajectory, document: ReplayDocument, first: int, last: int, masker: _Masker,
           curve: dict[int, int], costs: dict[int, StepCost]) -> Iterator[dict[str, Any]]:
    window = model_window(trajectory.info.model_name)
    for number in range(first, last + 1):
        view = document.step(number)
        cost = costs.get(number)
        status, notes = step_meter(view, curve.get(number), window, cost)
        yield {
            "n": number,
            "thought": masker.text(model_text(view)),
            "commands": [masker.text(action.command) for action in view.actions],
            "output": masker.text(output_text(view)) if view.observations else "",
            "meter": masker.text(describe(status, None, notes)),
            "level": meter_level(status),
            "tokens": status.prompt_tokens,
            "window": status.window,
            "estimated": bool(status.estimated),
            "cost_usd": None if cost is None or cost.dollars is None else round(cost.dollars, 8),
        }


def _record(trajectory: Trajectory, document: ReplayDocument, masker: _Masker) -> dict[str, Any]:
    """The run's record but its steps (written after it) and losses (known once they are)."""
    info = trajectory.info
    task = next((message.text for message in trajectory.messages if message.message_type.value == "task"), "")
    record: dict[str, Any] = {
        "version": PAGE_VERSION,
        "file": masker.text(trajectory.path.name),
        "format": trajectory.format,
        "model": masker.text(info.model_name or ""),
        "exit_status": masker.text(info.exit_status or ""),
        "task": masker.text(task),
        "submission": masker.submission(info.submission) if info.submission else "",
        "fidelity": [masker.text(line) for line in summary_lines(summary(trajectory))],
        "total_steps": document.step_count,
    }
    return record


_DATA = "\x00run-data\x00"
"""Where the page's data goes (`_page`): a mark no text of ours holds."""


def _data_block(text: str) -> str:
    """JSON text that no HTML parser can end early: `<`, `>`, `&` and the two line separators
    JavaScript treats as line ends are escaped (inside strings, where they only occur)."""
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return _LONE_SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)  # JSON's escape keeps it


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("page", name).read_text(encoding="utf-8")


def _page(record: dict[str, Any]) -> str:
    script = _asset("page.js")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    policy = (f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
              "base-uri 'none'; form-action 'none'")
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>swedeck · {_html_text(record['file'])}</title>\n"
        f"<style>\n{_asset('page.css')}</style>\n"
        "</head><body>\n"
        f"{_asset('page.html')}"
        f'<script type="application/json" id="run-data">{_DATA}</script>\n'
        f"<script>{script}</script>\n"
        "</body></html>\n"
    )


def _html_text(text: str) -> str:
    """Text for an HTML text node written by us (the title): the five special characters escaped."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("'", "&#39;"))
