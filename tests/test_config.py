"""SPEC §3: configuration models, layering, precedence and errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from swedeck.core import paths
from swedeck.core.config import ConfigError, SwedeckConfig, dump_yaml, load_config
from swedeck.core.ui_settings import load_ui_settings


def test_shipped_default_has_every_spec_default():
    config = load_config([], environ={})
    agent, model, env, run = config.agent, config.model, config.environment, config.run
    assert (agent.agent_class, agent.step_limit, agent.cost_limit, agent.wall_time_limit_s) == ("default", 0, 3.0, 0)
    assert (agent.mode, agent.whitelist_actions, agent.confirm_exit) == ("confirm", [], True)
    assert (agent.max_consecutive_format_errors, agent.history_processors) == (3, [])
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in agent.system_template
    assert (model.cost_tracking, model.use_streaming, model.stream_include_usage) == ("default", True, True)
    assert (model.usage_fallback, model.stream_guard_enabled, model.stream_guard_window) == ("estimate", False, 8192)
    assert (model.stream_guard_tag_threshold, model.tool_choice, model.require_reasoning) == (50, None, False)
    assert (model.set_cache_control, model.format_error_template, model.timeout_s) == (None, "{{ error }}", 600)
    assert (model.retry.attempts, model.retry.backoff_min_s, model.retry.backoff_max_s) == (6, 1, 60)
    assert model.context_window is None
    assert (env.environment_class, env.env, env.forward_env, env.timeout) == ("local", {}, [], 60)
    assert (env.post_startup_commands, env.post_startup_command_timeout, env.remove_on_close) == ([], 500, True)
    assert (run.output, run.keep_jsonl) == (None, False)


def test_shipped_yaml_defaults_match_the_models():
    shipped = load_config([], environ={})
    bare = SwedeckConfig()
    assert shipped.model == bare.model
    assert shipped.environment == bare.environment
    assert shipped.run == bare.run


def test_overrides_apply_in_order_and_parse_yaml():
    config = load_config(
        ["agent.step_limit=20", "agent.step_limit=7", "agent.mode=yolo",
         "agent.history_processors=[{type: default}]", "model.model_kwargs={temperature: 0.2}"],
        environ={},
    )
    assert config.agent.step_limit == 7
    assert config.agent.mode == "yolo"
    assert [p.type for p in config.agent.history_processors] == ["default"]
    assert config.model.model_kwargs == {"temperature": 0.2}


def test_files_merge_nested_mappings(tmp_path: Path):
    first = tmp_path / "a.yaml"
    first.write_text("model:\n  retry:\n    attempts: 2\n  model_kwargs: {temperature: 0}\n")
    second = tmp_path / "b.yaml"
    second.write_text("model:\n  retry:\n    backoff_max_s: 5\n")
    config = load_config([str(first), str(second)], environ={})
    assert (config.model.retry.attempts, config.model.retry.backoff_max_s) == (2, 5)
    assert config.model.retry.backoff_min_s == 1
    assert config.model.model_kwargs == {"temperature": 0}


def test_shipped_config_by_name():
    config = load_config(["swebench"], environ={})
    assert config.environment.environment_class == "docker"
    assert config.agent.step_limit == 250


def test_precedence_default_files_environment_command_line(tmp_path: Path):
    file = tmp_path / "c.yaml"
    file.write_text("agent:\n  step_limit: 5\n  cost_limit: 1.5\n  wall_time_limit_s: 10\n")
    environ = {"SWEDECK_AGENT__STEP_LIMIT": "9", "SWEDECK_AGENT__COST_LIMIT": "2.5"}
    config = load_config([str(file), "agent.step_limit=11"], environ=environ)
    assert config.agent.step_limit == 11  # command line beats environment
    assert config.agent.cost_limit == 2.5  # environment beats file
    assert config.agent.wall_time_limit_s == 10  # file beats default
    flagged = load_config(["agent.step_limit=11"], environ=environ, flags={"agent.step_limit": 13})
    assert flagged.agent.step_limit == 13


def test_user_config_file_is_a_layer_below_command_line_files(tmp_path: Path):
    paths.user_config_dir().mkdir(parents=True)
    paths.user_config_file().write_text("agent:\n  step_limit: 4\n  cost_limit: 9\n")
    other = tmp_path / "o.yaml"
    other.write_text("agent:\n  cost_limit: 1\n")
    config = load_config([str(other)], environ={})
    assert (config.agent.step_limit, config.agent.cost_limit) == (4, 1)


def test_mswea_and_nested_environment_variables():
    environ = {
        "MSWEA_USE_STREAMING": "false",
        "MSWEA_STREAM_GUARD_ENABLED": "true",
        "MSWEA_STREAM_GUARD_WINDOW": "100",
        "MSWEA_STREAM_GUARD_TAG_THRESHOLD": "7",
        "MSWEA_STREAM_INCLUDE_USAGE": "false",
        "SWEDECK_MODEL__RETRY__ATTEMPTS": "2",
        "SWEDECK_ENVIRONMENT__ENV": "{A: b}",
    }
    model = load_config([], environ=environ).model
    assert (model.use_streaming, model.stream_guard_enabled, model.stream_include_usage) == (False, True, False)
    assert (model.stream_guard_window, model.stream_guard_tag_threshold, model.retry.attempts) == (100, 7, 2)
    assert load_config([], environ=environ).environment.env == {"A": "b"}


def test_unknown_field_in_a_file_names_file_field_and_allowed_fields(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("agent:\n  step_limt: 3\n")
    with pytest.raises(ConfigError) as caught:
        load_config([str(bad)], environ={})
    message = str(caught.value)
    assert str(bad) in message and "agent.step_limt" in message
    assert "unknown field" in message and "step_limit" in message


def test_bad_literal_names_source_and_allowed_values():
    with pytest.raises(ConfigError) as caught:
        load_config(["agent.mode=fast"], environ={})
    message = str(caught.value)
    assert "-c agent.mode=fast" in message and "agent.mode" in message
    assert "'confirm', 'yolo' or 'human'" in message and "'fast'" in message


def test_the_ui_section_is_reported_as_every_other_section_is_and_with_them(tmp_path: Path):
    # `ui` is checked apart from the pydantic sections (the replay reads it before its first
    # frame without pydantic): its problems read the same and come in the same message
    keys = tmp_path / "keys.yaml"
    keys.write_text("ui:\n  keymap:\n    approve: 5\n    quit: q\n")
    with pytest.raises(ConfigError) as caught:
        load_config([str(keys), "ui.layout=wide", "ui.colour=red", "agent.mode=fast"], environ={})
    lines = str(caught.value).splitlines()
    assert lines[0] == "invalid configuration:"
    assert f"  {keys}: ui.keymap.approve: expected `str`, got `int` (got 5)" in lines
    assert ("  command line '-c ui.layout=wide': ui.layout: input should be 'auto', 'side-by-side' or 'stacked'"
            " (got 'wide')") in lines
    assert "  command line '-c ui.colour=red': ui.colour: unknown field; allowed here: theme, keymap, layout" in lines
    assert any("agent.mode" in line for line in lines) and len(lines) == 5
    with pytest.raises(ConfigError) as replay:
        load_ui_settings([str(keys)])
    assert str(replay.value).splitlines()[1] == f"  {keys}: ui.keymap.approve: expected `str`, got `int` (got 5)"
    good = load_config(["ui.layout=stacked", "ui.keymap={approve: y}"], environ={})
    assert (good.ui.layout, good.ui.keymap) == ("stacked", {"approve": "y"})
    assert load_ui_settings(["ui.layout=stacked", "ui.keymap={approve: y}"]) == good.ui
    assert SwedeckConfig.model_validate(good.model_dump(mode="json")).ui == good.ui  # a batch's recorded config


def test_bad_environment_variable_is_named():
    with pytest.raises(ConfigError, match="SWEDECK_AGENT__STEP_LIMIT.*agent.step_limit"):
        load_config([], environ={"SWEDECK_AGENT__STEP_LIMIT": "many"})


def test_unknown_section_in_environment_is_an_error():
    with pytest.raises(ConfigError, match="SWEDECK_AGNT__MODE.*agnt.*unknown field"):
        load_config([], environ={"SWEDECK_AGNT__MODE": "yolo"})


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("agent.agent_class=fancy", "unknown agent class"),
        ("agent.whitelist_actions=['(']", "invalid regex"),
        ("agent.system_template={% if %}", "Jinja2"),
        ("agent.history_processors=[{type: nope}]", "history_processors"),
        ("model.usage_fallback=maybe", "'estimate', 'requery' or 'none'"),
        ("environment.environment_class=podman", "'local' or 'docker'"),
    ],
)
def test_invalid_values_are_reported(spec: str, needle: str):
    with pytest.raises(ConfigError, match=needle.replace("[", r"\[").replace("(", r"\(")):
        load_config([spec], environ={})


def test_missing_file_and_unknown_name(tmp_path: Path):
    with pytest.raises(ConfigError, match="no shipped config of that name.*default"):
        load_config([str(tmp_path / "nope.yaml")], environ={})


def test_not_yaml_and_not_a_mapping(tmp_path: Path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("agent: [unclosed\n")
    with pytest.raises(ConfigError, match="broken.yaml.*not valid YAML"):
        load_config([str(broken)], environ={})
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config([str(listed)], environ={})


def test_dump_masks_secrets_and_keeps_token_counts():
    config = load_config(
        ["model.model_kwargs={api_key: sk-verysecret123, max_tokens: 512, tokens_per_second: 80}"], environ={}
    )
    text = dump_yaml(config)
    assert "sk-verysecret123" not in text
    assert "api_key: '***'" in text
    assert "max_tokens: 512" in text and "tokens_per_second: 80" in text
    assert "system_template: |" in text


def test_an_unchanged_yaml_file_is_read_from_the_cache_without_parsing_it(tmp_path: Path):
    # A replay's first frame reads the shipped config and the context-window map: the second
    # start takes what they parsed to from the cache, and does not import PyYAML at all.
    import os
    import subprocess
    import sys

    env = {**os.environ, "SWEDECK_CACHE_DIR": str(tmp_path / "cache")}
    probe = ("import sys\nfrom swedeck.core.ui_settings import load_ui_settings\n"
             "from swedeck.core.context_window import load_map\n"
             "ui, windows = load_ui_settings(), load_map()\n"
             "print('yaml' in sys.modules, ui.theme, len(windows) > 10)\n")
    runs = [subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60)
            for _ in range(2)]
    assert [run.stdout.split() for run in runs] == [["True", "swedeck-dark", "True"], ["False", "swedeck-dark", "True"]], \
        [run.stderr for run in runs]


def test_a_changed_yaml_file_is_parsed_again(tmp_path: Path):
    import os

    from swedeck.core.config_layers import load_yaml_file

    path = tmp_path / "config.yaml"
    path.write_text("ui:\n  theme: one\n")
    assert load_yaml_file(path) == {"ui": {"theme": "one"}}
    path.write_text("ui:\n  theme: two\n")  # the same size: the modification time tells it
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert load_yaml_file(path) == {"ui": {"theme": "two"}}
    replaced = tmp_path / "new.yaml"
    replaced.write_text("ui:\n  theme: six\n")
    os.utime(replaced, ns=(stat.st_atime_ns, path.stat().st_mtime_ns))
    os.replace(replaced, path)  # an editor's save: a new file, the same size and time
    assert load_yaml_file(path) == {"ui": {"theme": "six"}}


def test_values_json_cannot_give_back_are_parsed_every_time_and_exactly(tmp_path: Path):
    import datetime
    import math

    from swedeck.core import paths
    from swedeck.core.config_layers import load_yaml_file

    path = tmp_path / "odd.yaml"
    path.write_text("when: 2026-11-25\n1: one\nsize: .nan\nzero: -0.0\n")
    for _ in range(2):
        data = load_yaml_file(path)
        assert data["when"] == datetime.date(2026, 11, 25) and data[1] == "one" and math.isnan(data["size"])
    assert not list((paths.user_cache_dir() / "yaml").glob("*.json"))  # nothing kept that would come back changed


def test_a_damaged_or_unwritable_cache_is_only_a_slower_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from swedeck.core import paths
    from swedeck.core.config_layers import load_yaml_file

    path = tmp_path / "config.yaml"
    path.write_text("ui: {theme: one}\n")
    load_yaml_file(path)
    [kept] = (paths.user_cache_dir() / "yaml").glob("*.json")
    kept.write_bytes(b"{not json")
    assert load_yaml_file(path) == {"ui": {"theme": "one"}}
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("SWEDECK_CACHE_DIR", str(blocked / "cache"))  # cannot be made
    assert load_yaml_file(path) == {"ui": {"theme": "one"}}


def test_a_yaml_error_still_names_the_file_and_line(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text("ui:\n  theme: [one\n")
    with pytest.raises(ConfigError, match=r"bad.yaml \(line \d+\): not valid YAML"):
        load_config([str(path)])


def test_the_cache_of_a_config_is_the_person_s_own(tmp_path: Path):
    # A config may hold a key: its cached copy is readable by its owner only.
    from swedeck.core import paths
    from swedeck.core.config_layers import load_yaml_file

    path = tmp_path / "config.yaml"
    path.write_text("model:\n  model_kwargs: {api_key: sk-not-for-others}\n")
    load_yaml_file(path)
    [kept] = (paths.user_cache_dir() / "yaml").glob("*.json")
    assert kept.stat().st_mode & 0o777 == 0o600
    assert (paths.user_cache_dir() / "yaml").stat().st_mode & 0o077 == 0
