"""SPEC §7, §6.2, §11.2: the processor chain at run time (toggle, re-parameterize, hash, errors, tokens)."""

from __future__ import annotations

import pytest

from swedeck.core.errors import UsageError
from swedeck.core.processors.chain import ProcessorChain, config_hash, rebuild, validate_processors
from swedeck.core.tokens import count_messages
from tests.support.processors import steps

CONFIG = [
    {"type": "last_n_observations", "n": 2},
    {"type": "remove_regex", "remove": ["line 1 of \\d+\\n"]},
    {"type": "cache_control", "last_n_messages": 1},
]


def test_chain_applies_enabled_processors_in_order():
    history = steps(6)
    result = ProcessorChain(CONFIG).apply(history)
    processors = validate_processors(CONFIG)
    expected = history
    for processor in processors:
        expected = processor(expected)
    assert result.messages == expected
    assert result.errors == []


def test_chain_applies_nothing_when_empty():
    history = steps(2)
    result = ProcessorChain([]).apply(history)
    assert result.messages == history and result.report.saved == 0


def test_toggle_switches_a_processor_off_and_on():
    history = steps(6)
    chain = ProcessorChain(CONFIG[:1])
    on = chain.apply(history).messages
    assert chain.toggle(0).enabled is False
    assert chain.apply(history).messages == history
    chain.toggle(0, enabled=True)
    assert chain.apply(history).messages == on


def test_set_params_replaces_parameters_and_validates():
    chain = ProcessorChain(CONFIG[:1])
    assert chain.set_params(0, n=4).n == 4
    assert chain.processors[0].n == 4
    with pytest.raises(UsageError, match="n"):
        chain.set_params(0, n=0)
    with pytest.raises(UsageError, match="invalid parameters"):
        chain.set_params(0, bogus=1)
    with pytest.raises(UsageError, match="cannot change the type"):
        chain.set_params(0, type="worker")
    assert chain.processors[0].n == 4  # a rejected change leaves the processor as it was


def test_a_bad_index_is_a_clear_error():
    chain = ProcessorChain(CONFIG[:1])
    with pytest.raises(UsageError, match="no history processor at position 3"):
        chain.toggle(3)


def test_invalid_config_is_a_usage_error():
    with pytest.raises(UsageError, match="invalid history processor config"):
        ProcessorChain([{"type": "last_n_observation", "n": 1}])


def test_describe_lists_fields_types_values_and_choices():
    chain = ProcessorChain(CONFIG)
    info = chain.describe()
    assert [p.type for p in info] == ["last_n_observations", "remove_regex", "cache_control"]
    fields = {f.name: f for f in info[0].fields}
    assert set(fields) == {"n", "polling", "always_remove_output_for_tags", "always_keep_output_for_tags"}
    assert fields["n"].type == "int" and fields["n"].value == 2 and fields["n"].allowed is None
    assert info[0].enabled is True


def test_describe_gives_choices_for_booleans():
    from swedeck.core.processors.base import Processor
    from swedeck.core.processors.describe import describe

    class Flagged(Processor):
        type: str = "flagged"
        strict: bool = False

    assert describe(Flagged(), 0).fields[0].allowed == (True, False)


def test_config_hash_is_stable_and_ignores_disabled_processors_and_tag_order():
    a = ProcessorChain(CONFIG)
    b = ProcessorChain([dict(c) for c in CONFIG])
    assert a.config_hash() == b.config_hash()
    assert len(a.config_hash()) == 12
    assert ProcessorChain([{"type": "last_n_observations", "n": 1, "always_keep_output_for_tags": ["a", "b"]}]
                          ).config_hash() == ProcessorChain(
        [{"type": "last_n_observations", "n": 1, "always_keep_output_for_tags": ["b", "a", "a"]}]).config_hash()
    before = a.config_hash()
    a.toggle(1)
    assert a.config_hash() == config_hash(validate_processors([CONFIG[0], CONFIG[2]]))
    a.toggle(1)
    assert a.config_hash() == before


def test_config_hash_changes_with_parameters():
    chain = ProcessorChain(CONFIG)
    before = chain.config_hash()
    chain.set_params(0, n=3)
    assert chain.config_hash() != before


def test_configs_by_hash_records_every_config_used_and_rebuilds_any_prompt():
    history = steps(8)
    chain = ProcessorChain(CONFIG)
    first_hash, first = chain.config_hash(), chain.apply(history).messages
    chain.set_params(0, n=5)
    second_hash, second = chain.config_hash(), chain.apply(history).messages
    assert first != second
    assert set(chain.configs_by_hash) == {first_hash, second_hash}
    assert rebuild(history, chain.configs_by_hash[first_hash]).messages == first
    assert rebuild(history, chain.configs_by_hash[second_hash]).messages == second


def test_a_failing_processor_is_reported_and_skipped():
    history = steps(4)
    chain = ProcessorChain([{"type": "context_filter", "custom_filter": "tests.support.custom_filters:explode"},
                            {"type": "last_n_observations", "n": 1}])
    result = chain.apply(history)
    assert result.errors and result.errors[0].startswith("context_filter: ")
    assert result.messages == validate_processors([{"type": "last_n_observations", "n": 1}])[0](history)


def test_token_report_counts_before_and_after_each_processor():
    history = steps(10, lines=40)
    chain = ProcessorChain([{"type": "default"}, {"type": "last_n_observations", "n": 1}, {"type": "worker"}])
    chain.toggle(2)
    result = chain.apply(history)
    report = result.report
    assert report.before == count_messages(history)
    assert report.after == count_messages(result.messages)
    assert [s.type for s in report.stages] == ["default", "last_n_observations"]  # disabled ones do not appear
    assert report.stages[0].saved == 0
    assert report.stages[1].before == report.before and report.stages[1].saved > 0
    assert report.saved == sum(s.saved for s in report.stages)


def test_apply_does_not_copy_unchanged_messages():
    history = steps(10)
    out = ProcessorChain(CONFIG).apply(history).messages
    assert out[0] is history[0] and out[2] is history[2]


def test_rebuilding_a_prompt_reuses_the_changed_copies():
    # Same objects on every build: token counts stay cached and the "next ≈ N" estimate is cheap.
    history = steps(10)
    chain = ProcessorChain(CONFIG)
    first, second = chain.apply(history).messages, chain.apply(history).messages
    assert first == second
    assert all(a is b for a, b in zip(first, second))
    assert first[3] is not history[3]


def test_estimate_is_the_token_count_of_the_built_prompt():
    history = steps(10, lines=20)
    chain = ProcessorChain(CONFIG)
    assert chain.estimate(history).after == count_messages(chain.apply(history).messages)
    chain.toggle(0)
    assert chain.estimate(history).after > count_messages(ProcessorChain(CONFIG).apply(history).messages)


def test_describe_gives_every_field_a_description_for_the_panel():
    from swedeck.core.processors import PROCESSORS

    configs = [{"type": name, **({"n": 1} if name == "last_n_observations" else {})} for name in PROCESSORS]
    for info in ProcessorChain(configs).describe():
        for described in info.fields:
            assert described.description, f"{info.type}.{described.name} has no description"
