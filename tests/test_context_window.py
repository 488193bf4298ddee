"""Context windows (SPEC §5): normalization, boundary-aware lookup, the user map, the CLI."""

from __future__ import annotations

import subprocess

import pytest
import yaml

from conftest import REPO, swedeck_command
from swedeck.core import paths
from swedeck.core.context_window import (
    ContextWindow,
    load_map,
    lookup,
    normalize_model_name,
    resolve_context_window,
    user_map_path,
)


@pytest.mark.parametrize("name, normalized", [
    ("hosted_vllm/Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8", "qwen3-coder-30b-a3b-instruct"),
    ("gpt-4o-2024-08-06", "gpt-4o"),
    ("openai/gpt-4o-mini", "gpt-4o-mini"),
    ("anthropic/claude-3-5-sonnet-20241022", "claude-3-5-sonnet"),
    ("gemini/gemini-2.0-flash-exp", "gemini-2.0-flash"),
    ("gemini-1.5-pro-latest", "gemini-1.5-pro"),
    ("gpt-4.5-preview", "gpt-4.5"),
    ("gpt-4-0613", "gpt-4"),
    ("some-model-2024-01-01-preview", "some-model"),
    ("TheBloke/Llama-3.1-8B-Instruct-AWQ", "llama-3.1-8b-instruct"),
    ("mistral-7b-instruct-q4_k_m", "mistral-7b-instruct"),
    ("qwen2.5-coder-32b-instruct-int4-gptq", "qwen2.5-coder-32b-instruct"),
    ("model-bf16", "model"),
    ("bedrock/us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"),
    ("GPT-5", "gpt-5"),
])
def test_normalization(name, normalized):
    assert normalize_model_name(name) == normalized


def test_prefix_lookup_ends_at_a_boundary():
    windows = {"gpt-4": 8192, "gpt-4-32k": 32768, "llama3.1": 131072, "qwen3": 40960}
    assert lookup("gpt-4-turbo-x", windows) == (8192, "gpt-4")
    assert lookup("gpt-4-32k-0613x", windows) == (32768, "gpt-4-32k")  # the longest key wins
    assert lookup("gpt-4.5", windows) is None  # not the 8192 of gpt-4
    assert lookup("gpt-4o", windows) is None
    assert lookup("llama3.1:8b", windows) == (131072, "llama3.1")
    assert lookup("qwen3.5-coder", windows) is None
    assert lookup("qwen3.final", windows) == (40960, "qwen3")


def test_gpt_4_5_is_not_answered_by_gpt_4():
    window = resolve_context_window("gpt-4.5-preview")
    assert window.window != 8192 and window.normalized == "gpt-4.5"


def test_seed_map_covers_the_families():
    windows = load_map(paths.shipped_configs_dir() / "model_context_windows.yaml")
    for name in ["gpt-4", "gpt-4o", "gpt-4.1", "gpt-5", "o3-mini", "claude-3-5-sonnet", "claude-3-7-sonnet",
                 "claude-sonnet-4-5", "gemini-1.5-pro", "gemini-2.5-pro", "llama-3.1-70b-instruct",
                 "qwen2.5-72b-instruct", "qwen3-32b", "deepseek-v3", "deepseek-r1", "mistral-large", "codestral"]:
        assert lookup(name, windows), name


def test_map_is_copied_to_the_user_dir_and_prefix_hits_are_saved():
    path = user_map_path()
    assert not path.exists()
    first = resolve_context_window("openai/gpt-4-turbo-fancy")
    assert first == ContextWindow(128000, "gpt-4-turbo-fancy", "map (prefix: gpt-4-turbo)")
    assert path.is_file() and yaml.safe_load(path.read_text())["gpt-4-turbo-fancy"] == 128000
    assert "# Context windows" in path.read_text()  # the user's copy keeps its comments
    again = resolve_context_window("gpt-4-turbo-fancy")
    assert again.source == "map"


def test_user_map_is_what_is_read():
    path = user_map_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("my-model: 12345\n")
    assert resolve_context_window("hosted_vllm/org/My-Model-FP8") == ContextWindow(12345, "my-model", "map")
    assert resolve_context_window("gpt-4o").source == "unknown"


def test_override_wins_and_unknown_is_unknown():
    assert resolve_context_window("gpt-4o", override=5000) == ContextWindow(5000, "gpt-4o", "config")
    unknown = resolve_context_window("hosted_vllm/nobody/never-heard-of-it")
    assert unknown.window is None and unknown.source == "unknown"


def test_litellm_fallback_when_opted_in():
    window = resolve_context_window("babbage-002", use_litellm=True)
    assert window.source == "litellm" and window.window and window.window > 1000


def test_budget_uses_the_last_prompt_and_is_clamped():
    from swedeck.core.events import ContextStatus

    assert ContextStatus(window=1000, prompt_tokens=250).left_percent == 75.0
    assert ContextStatus(window=1000, prompt_tokens=5000).left_percent == 0.0
    assert ContextStatus(window=None, prompt_tokens=10).left_percent is None
    assert ContextStatus(window=1000, prompt_tokens=None).left_percent is None


@pytest.mark.parametrize("model, expected", [
    ("hosted_vllm/Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8",
     ["normalized: qwen3-coder-30b-a3b-instruct", "window: 262144", "source: map"]),
    ("gpt-4o-2024-08-06", ["normalized: gpt-4o", "window: 128000", "source: map"]),
])
def test_cli_prints_three_lines(model, expected):
    result = subprocess.run([*swedeck_command(), "context-window", model], capture_output=True, text=True,
                            cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == expected


def test_cli_honours_the_config_override():
    result = subprocess.run([*swedeck_command(), "context-window", "gpt-4o", "-c", "model.context_window=4242"],
                            capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == ["window: 4242", "source: config"]


def test_context_status_from_the_last_usage():
    from swedeck.core.agent.context import ContextTracker
    from swedeck.core.messages import Usage

    tracker = ContextTracker(1000, "map")
    assert tracker.status().left_percent is None  # nothing measured yet
    tracker.record(Usage(prompt_tokens=400, completion_tokens=9, cached_tokens=300), [])
    status = tracker.status([])
    assert (status.window, status.prompt_tokens, status.cached_tokens, status.next_estimate) == (1000, 400, 300, 400)
    assert status.left_percent == 60.0 and status.window_source == "map" and status.next_anchored


def test_an_unknown_model_gets_a_hint_to_set_its_window():
    """Issue 62: `context-window` of an unknown model said `window: unknown` and no more."""
    import subprocess

    from conftest import swedeck_command

    done = subprocess.run([*swedeck_command(), "context-window", "no-such-model-xyz"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "window: unknown" in done.stdout
    assert "-c model.context_window=TOKENS" in done.stdout
    known = subprocess.run([*swedeck_command(), "context-window", "no-such-model-xyz", "-c",
                            "model.context_window=32000"], capture_output=True, text=True, timeout=120)
    assert "32000" in known.stdout and "hint:" not in known.stdout
