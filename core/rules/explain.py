"""A verdict in words (`swedeck rules check`): the decision, each part and the rule behind it,
the files in the order read, and the rules that can never decide."""

from __future__ import annotations

from .model import RuleSet, Verdict


def explain(verdict: Verdict, rules: RuleSet) -> list[str]:
    lines = [f"{verdict.decision.upper()}  {verdict.command}"]
    for part in verdict.parts:
        lines.append(f"  {part.decision:5}  {part.text}")
        lines.append(f"         {part.why}")
    lines += [f"  note: {note}" for note in verdict.notes]
    lines.append(f"rules: {rules.semantics}")
    lines.append("read, in order: " + (", ".join(rules.files) if rules.files else "no file"))
    lines.append(f"  {len(rules.rules)} rules about commands")
    lines += [f"  dead: {rule.pattern} ({rule.where()}): {why}" for rule, why in rules.dead]
    return lines
