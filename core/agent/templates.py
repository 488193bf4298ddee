"""Rendering the agent's Jinja2 templates (StrictUndefined: a missing variable is an error)."""

from __future__ import annotations

from typing import Any

import jinja2

from ..errors import UsageError

_ENV = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False)


def render(name: str, template: str, variables: dict[str, Any]) -> str:
    try:
        return _ENV.from_string(template).render(**variables).strip("\n")
    except jinja2.UndefinedError as exc:
        available = ", ".join(sorted(variables))
        raise UsageError(f"agent.{name}: {exc.message}; available variables: {available}") from None
    except jinja2.TemplateError as exc:
        raise UsageError(f"agent.{name}: {exc}") from None
