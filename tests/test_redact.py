"""SPEC §9.4: secrets never reach a trajectory or a log."""

from __future__ import annotations

from support.reliability import SUBMIT
from swedeck.core.redact import MASK, Redactor, is_secret_name, redact_mapping, secret_values


def test_secret_names_match_as_substrings_in_any_case_but_counts_keep_their_values():
    for name in ("api_key", "OPENAI_API_KEY", "GITHUB_TOKEN", "db_password", "AWS_SECRET_ACCESS_KEY", "apiKey",
                 "API_KEYS", "SECRETS", "ACCESS_TOKENS", "MYTOKEN", "OPENAIKEY", "Authorization"):
        assert is_secret_name(name), name
    assert not is_secret_name("keymap")
    record = {"max_tokens": 8192, "tokens_per_second": 80.0, "usage": {"prompt_tokens": 10, "cached_tokens": 0},
              "ui": {"keymap": {"approve": "o"}}, "MYTOKEN": "abc123", "API_KEYS": "k1,k2"}
    masked = redact_mapping(record)
    assert masked["max_tokens"] == 8192 and masked["usage"] == {"prompt_tokens": 10, "cached_tokens": 0}
    assert masked["tokens_per_second"] == 80.0 and masked["ui"] == {"keymap": {"approve": "o"}}
    assert masked["MYTOKEN"] == MASK and masked["API_KEYS"] == MASK


def test_headers_and_url_credentials_are_masked():
    record = {"model_kwargs": {"extra_headers": {"Authorization": "Bearer s3cr3t-value"},
                               "api_base": "https://alice:pa55w0rd@llm.example.com/v1"}}
    masked = redact_mapping(record)
    assert masked["model_kwargs"]["extra_headers"]["Authorization"] == MASK
    assert masked["model_kwargs"]["api_base"] == f"https://alice:{MASK}@llm.example.com/v1"
    assert Redactor().text("see https://bob:hunter22@host/x") == f"see https://bob:{MASK}@host/x"


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


TOKENS = {
    "github": "ghp_" + "a1B2c3D4e5" * 4,
    "github_pat": "github_pat_" + "11ABCDEFG0" * 5,
    "openai": "sk-proj-" + "Zx9_Yw8-Vu" * 5,
    "anthropic": "sk-ant-api03-" + "Q1w2E3r4T5" * 6,
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-abcdefghijkl",
    "pem": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
}


def test_token_shapes_are_masked_with_their_prefix_kept():
    from swedeck.core.redact import mask_shapes

    for name, token in TOKENS.items():
        masked = mask_shapes(f"before {token} after")
        assert token not in masked and MASK in masked and masked.startswith("before ") and masked.endswith(" after"), name
    assert mask_shapes("ghp_" + "x" * 36) == "ghp_***"
    for harmless in ("max_tokens", "sk-1", "risk-free-and-task-based-approach", "AKIA1234", "a desk-lamp"):
        assert mask_shapes(harmless) == harmless


def test_a_command_printing_tokens_leaves_none_in_the_trajectory_or_on_screen(openai_server, tmp_path):
    import io
    import json

    from support.driver import make_config
    from support.openai_server import Turn, model_config
    from swedeck.core.headless import run_headless

    script = tmp_path / "leak.txt"
    script.write_text("\n".join(TOKENS.values()) + "\n")
    openai_server.script(Turn.bash_tool(f"cat {script}"), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    config.run.keep_jsonl = True
    out = io.StringIO()
    assert run_headless(config, "read the file", out=out).exit_status == "Submitted"
    written = (tmp_path / "session.traj.json").read_text() + (tmp_path / "session.traj.jsonl").read_text()
    for name, token in TOKENS.items():
        body = token.splitlines()[1] if name == "pem" else token
        assert body not in written, f"{name} written"
        assert body not in out.getvalue(), f"{name} shown"
    assert "ghp_***" in written and "AKIA***" in written
    sent = json.dumps(openai_server.requests[1]["messages"])  # the model still gets what the command printed
    assert TOKENS["github"] in sent and TOKENS["aws"] in sent


def test_the_model_gets_masked_tokens_when_asked(openai_server, tmp_path):
    from support.driver import Driver, make_config, run_session
    from support.openai_server import Turn, model_config

    openai_server.script(Turn.bash_tool(f"echo {TOKENS['openai']}"), Turn.bash_tool(SUBMIT))
    config = make_config(tmp_path, model_config(openai_server), agent__mode="yolo")
    config.environment.mask_secret_shapes = True
    run_session(config, "t", Driver(), interactive=False)
    result = openai_server.requests[1]["messages"][-1]  # the observation (the model's own call had it anyway)
    assert result["role"] == "tool" and TOKENS["openai"] not in result["content"] and "sk-proj-***" in result["content"]


def test_config_show_and_the_trajectory_keep_headers_and_url_passwords_out(openai_server, tmp_path):
    import subprocess

    from conftest import swedeck_command
    from support.driver import Driver, make_config, run_session
    from support.openai_server import Turn, model_config

    shown = subprocess.run([*swedeck_command(), "config", "show", "-c", "model.model_kwargs.api_base=https://al:pw1234567@h/v1",
                            "-c", "model.model_kwargs.extra_headers={Authorization: Bearer tok-9876543}"],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "pw1234567" not in shown.stdout and "tok-9876543" not in shown.stdout and "al:***@h" in shown.stdout
    openai_server.script(Turn.bash_tool(SUBMIT))
    model = model_config(openai_server, model_kwargs={"extra_headers": {"Authorization": "Bearer tok-9876543"}})
    config = make_config(tmp_path, model, agent__mode="yolo")
    run_session(config, "t", Driver(), interactive=False)
    assert "tok-9876543" not in (tmp_path / "session.traj.json").read_text()


def test_password_and_secret_assignments_in_output_are_masked_never_in_a_patch():
    """Issue 62: `password=…` in command output was written as it was (5 of 5)."""
    from swedeck.core.redact import Redactor

    redactor = Redactor()
    output = ("db: password=hunter2 user=bob\nDB_PASSWD=s3cr3t-value\nclient_secret=abcdef&x=1\n"
              "url=https://h/?passwd=zz9zz9 ok\nSECRET=top-secret-thing")
    shown = redactor.text(output)
    for value in ("hunter2", "s3cr3t-value", "abcdef", "zz9zz9", "top-secret-thing"):
        assert value not in shown, value
    assert "user=bob" in shown and "x=1" in shown and "password=***" in shown
    patch = "+PASSWORD=hunter2\n"
    assert redactor.exact(patch) == patch  # what a run produced is never changed by a pattern
