"""SPEC §9.4: secrets never reach a trajectory or a log."""

from __future__ import annotations

from swedeck.core.redact import MASK, Redactor, is_secret_name, redact_mapping, secret_values


def test_secret_names_are_words_not_substrings():
    for name in ("api_key", "OPENAI_API_KEY", "GITHUB_TOKEN", "db_password", "AWS_SECRET_ACCESS_KEY", "apiKey"):
        assert is_secret_name(name), name
    for name in ("max_tokens", "tokens_per_second", "keymap", "monkey", "prompt_tokens"):
        assert not is_secret_name(name), name


def test_nested_records_are_masked():
    record = {"model": {"model_kwargs": {"api_key": "sk-123456", "temperature": 0}}, "env": [{"HF_TOKEN": "x"}]}
    masked = redact_mapping(record)
    assert masked["model"]["model_kwargs"] == {"api_key": MASK, "temperature": 0}
    assert masked["env"][0]["HF_TOKEN"] == MASK
    assert record["model"]["model_kwargs"]["api_key"] == "sk-123456"


def test_secret_values_are_scrubbed_from_text():
    values = secret_values({"model_kwargs": {"api_key": "sk-abcdef123"}, "forward": {"GITHUB_TOKEN": "ghp_zzzzzz"}})
    redactor = Redactor(values)
    assert redactor.text("key=sk-abcdef123 and ghp_zzzzzz.") == f"key={MASK} and {MASK}."
    assert redactor.record({"content": "echo sk-abcdef123"}) == {"content": f"echo {MASK}"}
