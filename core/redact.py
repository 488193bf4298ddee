"""Keeping secrets out of trajectories and logs (SPEC §9.4).

Three rules:
- by name: a text value whose key contains KEY, TOKEN, SECRET, PASSWORD, PASSWD or
  CREDENTIAL, in any case (`api_key`, `OPENAI_API_KEY`, `API_KEYS`, `MYTOKEN`, `SECRETS`),
  or is a credential header (`Authorization`, `Cookie`), is written as `***`. Numbers and
  flags are never secrets, so `max_tokens` and `prompt_tokens` keep their counts; `keymap`
  (the UI's key bindings) is named as not secret;
- credentials in a URL (`https://user:pass@host`) lose the password, and credential headers
  printed by a command (`Authorization: Bearer …`, `X-Api-Key: …`) lose their value;
- by value: the values of such secrets (from the config and from forwarded environment
  variables) are replaced by `***` wherever they appear in text, so a command that echoes
  `$OPENAI_API_KEY` does not leak it into an observation;
- by shape: well-known token formats (`SHAPES`: GitHub `ghp_…`/`github_pat_…`, OpenAI and
  Anthropic `sk-…`/`sk-ant-…`, AWS `AKIA…`, Slack `xox[bpoas]-…`, PEM private keys) are
  masked in what is written (trajectories) and shown (UI, headless output), keeping the
  prefix (`ghp_***`) so a person sees what was there. What the model gets keeps them,
  since a task may need them (`environment.mask_secret_shapes: true` masks those too).

What a run produced is never changed by shape: a submitted patch keeps its URLs and token-
shaped strings byte for byte (`exact`); only the person's own secret values are masked in it,
and the run says so (SPEC §9.4, docs/security.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import quote

MASK = "***"
SHAPES = re.compile(
    r"-----BEGIN (?P<pem>[A-Z0-9 ]*PRIVATE KEY)-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"
    r"|(?:\b|(?<=%[0-9A-Fa-f]{2})|(?<=%25[0-9A-Fa-f]{2})|(?<=%2525[0-9A-Fa-f]{2})|(?<=\\[nrt]))(?P<prefix>gh[pousr]_|github_pat_|sk-ant-|sk-(?:proj-)?|xox[bpoas]-|AKIA|ASIA)"
    r"(?P<body>(?<=AKIA)[0-9A-Z]{16}|(?<=ASIA)[0-9A-Z]{16}|(?<![AS]IA)[A-Za-z0-9_-]{16,})",
    re.DOTALL,
)
"""Token formats masked by shape. A shape needs its prefix and at least 16 token characters
after it (`sk-1` in prose stays as it is). It starts at a word boundary, or right after a
URL escape (`%3Aghp_…` in an encoded URL an error message quotes, or encoded twice or three
times: `%252Fghp_…` in a Docker error) or a JSON/C escape
(`\\nghp_…`)."""


def mask_shapes(text: str) -> str:
    """`text` with every well-known token shape masked (prefix kept: `sk-***`)."""
    if not text:
        return text
    return SHAPES.sub(_shape_mask, text)


def _shape_mask(match: re.Match[str]) -> str:
    if match.group("pem"):
        kind = match.group("pem")
        return f"-----BEGIN {kind}-----{MASK}-----END {kind}-----"
    return match.group("prefix") + MASK
_SECRET_PARTS = ("key", "token", "secret", "password", "passwd", "credential")
_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "set-cookie"}
_NOT_SECRET = {"keymap"}
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^/\s:@]+:)[^@\s/]+@", re.IGNORECASE)
_MIN_SECRET_LENGTH = 6


def is_secret_name(name: str) -> bool:
    lower = str(name).lower()
    if lower in _NOT_SECRET:
        return False
    return lower in _SECRET_HEADERS or any(part in lower for part in _SECRET_PARTS)


def _is_secret_value(value: Any) -> bool:
    """Text (or a structure holding text) can be a secret; a count or a flag cannot."""
    if isinstance(value, bool | int | float) or value in (None, ""):
        return False
    return True


def mask_url_credentials(text: str) -> str:
    return _URL_PASSWORD.sub(lambda match: match.group("head") + MASK + "@", text) if "@" in text else text


_CREDENTIAL_HEADER = re.compile(
    r"(?P<head>\b(?:proxy-)?authorization\s*:\s*(?:(?:bearer|basic|token|digest|bot)\s+)?"
    r"|\b(?:x-api-key|api-key|x-auth-token|private-token)\s*:\s*)(?P<value>[^\s'\"]{6,})",
    re.IGNORECASE,
)


def mask_credential_headers(text: str) -> str:
    """`Authorization: Bearer abc…` (and `X-Api-Key: …` and the like) printed by a command, as
    `curl -v` does: the credential goes, the header's name and scheme stay."""
    if ":" not in text:
        return text
    return _CREDENTIAL_HEADER.sub(lambda match: match.group("head") + MASK, text)


_SECRET_ASSIGNMENT = re.compile(r"(?P<head>\b[\w.-]*(?:password|passwd|secret)[\w.-]*=)(?P<value>[^\s&'\"]{3,})",
                                re.IGNORECASE)


def mask_assignments(text: str) -> str:
    """`password=hunter2`, `DB_PASSWD=…`, `client_secret=…` in a command's output (a config
    printed, a URL's query): the value goes, the name stays. Never applied to a patch (`exact`)."""
    if "=" not in text:
        return text
    return _SECRET_ASSIGNMENT.sub(lambda match: match.group("head") + MASK, text)


def redact_mapping(data: Any) -> Any:
    """A copy of nested mappings/lists with every secret-named text value masked and the
    password of every URL removed."""
    if isinstance(data, Mapping):
        return {
            key: (MASK if is_secret_name(key) and _is_secret_value(value) else redact_mapping(value))
            for key, value in data.items()
        }
    if isinstance(data, list | tuple):
        return [redact_mapping(item) for item in data]
    if isinstance(data, str):
        return mask_url_credentials(data)
    return data


def secret_values(data: Any) -> set[str]:
    """The string values of secret-named keys anywhere in nested mappings."""
    found: set[str] = set()
    if isinstance(data, Mapping):
        for key, value in data.items():
            if is_secret_name(key) and isinstance(value, str) and len(value) >= _MIN_SECRET_LENGTH:
                found.add(str(value))
            else:
                found |= secret_values(value)
    elif isinstance(data, list | tuple):
        for item in data:
            found |= secret_values(item)
    return found


class Redactor:
    """Masks known secret values in text and secret-named keys in records."""

    def __init__(self, values: Iterable[str] = (), *, shapes_for_model: bool = False):
        self._values: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self.shapes_for_model = shapes_for_model
        self.add(values)

    def add(self, values: Iterable[str]) -> None:
        given = {value for value in values if value and len(value) >= _MIN_SECRET_LENGTH}
        # as an error message quotes it inside a URL, too (`ghp%2Fx…`, `a%40b`)
        self._values |= given | {quote(value, safe="") for value in given} | {quote(value) for value in given}
        if self._values:
            ordered = sorted(self._values, key=len, reverse=True)
            self._pattern = re.compile("|".join(re.escape(value) for value in ordered))

    def text(self, text: str) -> str:
        """For what is written and shown: known secret values, token shapes, URL passwords,
        credential headers and `password=…` assignments masked."""
        return mask_assignments(mask_credential_headers(mask_url_credentials(mask_shapes(self.values(text)))))

    def values(self, text: str) -> str:
        """Known secret values masked (token shapes too with `shapes_for_model`): for what the model gets."""
        return self.values_counted(text)[0]

    def values_counted(self, text: str) -> tuple[str, int]:
        """`values(text)` and how many secrets it masked."""
        masked = 0
        if self._pattern is not None and text:
            text, masked = self._pattern.subn(MASK, text)
        if self.shapes_for_model and text:
            text, shapes = SHAPES.subn(_shape_mask, text)
            masked += shapes
        return text, masked

    def exact(self, text: str) -> str:
        """Only the person's own secret values masked: for what a run produced and must keep byte
        for byte (a submitted patch): a token shape or a URL in a diff is the repository's own text."""
        if self._pattern is not None and isinstance(text, str) and text:
            return self._pattern.sub(MASK, text)
        return text

    def record(self, data: Any) -> Any:
        """A JSON-like record with secret-named keys masked and secret values and token shapes
        scrubbed from text."""
        return self._scrub(redact_mapping(data))

    def _scrub(self, data: Any) -> Any:
        return each_text(data, self.text)


def each_text(data: Any, change: Callable[[str], str]) -> Any:
    """A copy of nested mappings and lists with `change` applied to every text value."""
    if isinstance(data, str):
        return change(data)
    if isinstance(data, Mapping):
        return {key: each_text(value, change) for key, value in data.items()}
    if isinstance(data, list):
        return [each_text(item, change) for item in data]
    return data


_CREDENTIAL_PARTS = ("key", "token", "secret", "signature", "auth", "password", "passwd", "credential", "cookie")
_CREDENTIAL_NAMES = frozenset({"sig", "code", "session", "sessionid", "session_id"})
_NOT_CREDENTIAL_HEADERS = frozenset({"keep-alive"})


def is_credential_field(name: str) -> bool:
    """A query parameter's or a header's name that carries a credential (`?key=`, `?api_key=`,
    `?access_token=`, `?sig=`, `X-Auth-Token`, `Private-Token`, `Ocp-Apim-Subscription-Key`,
    `X-Amz-Security-Token`): a request's own fields are content, these are not."""
    lower = str(name).lower()
    if lower in _NOT_CREDENTIAL_HEADERS:
        return False
    return lower in _CREDENTIAL_NAMES or any(part in lower for part in _CREDENTIAL_PARTS)


_BODY_CREDENTIALS = frozenset({"api_key", "apikey", "access_token", "auth_token", "token", "secret", "client_secret",
                               "password", "passwd", "key", "sig", "signature", "authorization", "credentials",
                               "credential", "private_token", "subscription_key", "session_token", "security_token",
                               "refresh_token", "id_token", "x_api_key", "bearer"})
"""A request body's fields that are credentials by their exact name (`"api_key": "…"`); a field
that only contains such a word (`prompt_cache_key`, `max_tokens`) is the request's content."""
_QUERY_PAIR = re.compile(r"(?P<head>(?:^|[?&;])(?P<name>[^=&;#?]+)=)(?P<value>[^&;#]*)")


def mask_query(url: str) -> str:
    """A URL (or a path) with the value of every credential-named query parameter masked."""
    if "=" not in url:
        return url
    path, mark, query = url.partition("?")
    if not mark:
        return url
    masked = _QUERY_PAIR.sub(lambda match: match.group("head") + MASK
                             if is_credential_field(match.group("name")) and match.group("value") else match.group(),
                             query)
    return f"{path}?{masked}"


def mask_body_credentials(data: Any) -> Any:
    """A request body with the text of every field named as a credential masked, at any depth."""
    if isinstance(data, Mapping):
        return {key: MASK if str(key).lower().replace("-", "_") in _BODY_CREDENTIALS and isinstance(value, str) and value
                else mask_body_credentials(value) for key, value in data.items()}
    if isinstance(data, list):
        return [mask_body_credentials(item) for item in data]
    return data


def environment_secrets(environment: Mapping[str, str]) -> set[str]:
    """The values of the host's secret-named variables (`OPENAI_API_KEY`, `GITLAB_TOKEN`): masked
    wherever they appear in a record."""
    return {value for name, value in environment.items()
            if (is_secret_name(name) or is_credential_field(name)) and len(value) >= _MIN_SECRET_LENGTH
            and not value.startswith(("/", "http://127.0.0.1", "http://localhost"))}
