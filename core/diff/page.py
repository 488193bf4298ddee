"""Runs compared, as one offline HTML page (`swedeck diff A B … --html OUT`, issue 66): each run's
totals, every pair's first divergence with its class and evidence, and the aligned rows (the
reference's steps, each with the step every other run took there, each run's first divergence
marked).

The page is static: no script, and a Content-Security-Policy that loads nothing (styles inline
only). Every text from a run is escaped as an HTML text node, drawn with its control and
invisible characters as marks (`core.text.visible`), and masked as the trajectory export masks
(token shapes, URL passwords, credential headers): the page is for reading, the files keep
every byte.
"""

from __future__ import annotations

from pathlib import Path

from ..redact import Redactor
from ..text import visible
from .align import totals_line
from .nway import Comparison, evidence_text, first_rows, place, rows

MARKS = {"same": "=", "changed": "≠", "a_only": "<", "b_only": ">"}
_POLICY = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em; color: #1b1b1b; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.5em; }
table { border-collapse: collapse; } td, th { padding: 0.15em 0.6em; vertical-align: top; text-align: left; }
tr:nth-child(even) td { background: #f4f4f4; }
.rows td { font-family: ui-monospace, monospace; white-space: pre; }
.class { font-weight: bold; } .first { background: #ffe9a8 !important; } .none { color: #888; }
"""


def diff_page(comparison: Comparison, paths: list[str]) -> bytes:
    """The page of runs `paths` (the first the reference), compared by `nway.compare`."""
    mask = Redactor()

    def text(value: object) -> str:
        return _escaped(visible(mask.text(str(value))))

    names = [Path(path).name for path in paths]
    aligned = rows(comparison)
    first = first_rows(aligned, len(paths))
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f'<meta http-equiv="Content-Security-Policy" content="{_POLICY}">',
           '<meta name="referrer" content="no-referrer">',
           f"<title>swedeck diff · {text(names[0])} and {len(paths) - 1} other run{'s' if len(paths) > 2 else ''}"
           f"</title><style>{_STYLE}</style></head><body data-ready=\"true\">",
           f"<h1>{len(paths)} runs compared · the reference: R {text(names[0])}</h1>", '<h2>Runs</h2><ul id="runs">']
    for index, total in enumerate(comparison.totals):
        out.append(f"<li>{text(totals_line('R' if index == 0 else f'run {index}', total))}</li>")
    out.append('</ul><h2>Where they parted, and why</h2><table id="divergences"><tr><th>runs</th><th>first divergence'
               "</th><th>class</th><th>evidence</th></tr>")
    for found in comparison.divergences:
        i, j = found.pair
        pair = f"{'R' if i == 0 else i} and {j}"
        if found.step is None:
            out.append(f'<tr><td>{pair}</td><td class="none">never part</td><td></td><td></td></tr>')
            continue
        out.append(f"<tr><td>{pair}</td><td>step {found.step} of {'R' if i == 0 else f'run {i}'}</td>"
                   f'<td class="class">{text(found.cls or "")}</td><td>{text(evidence_text(found.evidence))}</td></tr>')
    out.append('</table><h2>Steps, aligned with the reference\'s</h2><p>= the same step, ≠ another, &lt; none there, '
               "&gt; a step only that run took, * its output differed; the marked cell is the run's first divergence."
               '</p><table class="rows" id="rows"><tr><th>R</th>'
               + "".join(f"<th>{index}: {text(name)}</th>" for index, name in enumerate(names[1:], start=1)) + "</tr>")
    for index, row in enumerate(aligned):
        reference = "" if row["ref_step"] is None else f"{row['ref_step']} {row['ref_command'] or ''}"
        cells = [f"<td>{text(reference)}</td>"]
        for run in range(1, len(paths)):
            other = place(row, run)
            if other is None:
                cells.append("<td></td>")
                continue
            said = f"{MARKS[other['kind']]} {other['step'] or '-'}{'*' if other['output_differs'] else ''} " \
                   f"{other['command'] or ''}"
            marked = ' class="first"' if first[run] == index else ""
            cells.append(f"<td{marked}>{text(said.rstrip())}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table></body></html>\n")
    return "\n".join(out).encode("utf-8", "backslashreplace")


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
