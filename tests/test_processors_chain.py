"""SPEC §7, §6.2, §11.2: the processor chain at run time (apply, hash, errors, shared copies)."""

from __future__ import annotations

import pytest

from support.processors import steps
from swedeck.core.errors import UsageError
from swedeck.core.processors.chain import ProcessorChain, config_hash, validate_processors

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
    assert result.messages == history and result.errors == []


def test_invalid_config_is_a_usage_error():
    with pytest.raises(UsageError, match="invalid history processor config"):
        ProcessorChain([{"type": "last_n_observation", "n": 1}])


def test_config_hash_is_stable_and_ignores_disabled_processors_and_tag_order():
    a = ProcessorChain(CONFIG)
    b = ProcessorChain([dict(c) for c in CONFIG])
    assert a.config_hash() == b.config_hash()
    assert len(a.config_hash()) == 12
    assert ProcessorChain([{"type": "last_n_observations", "n": 1, "always_keep_output_for_tags": ["a", "b"]}]
                          ).config_hash() == ProcessorChain(
        [{"type": "last_n_observations", "n": 1, "always_keep_output_for_tags": ["b", "a", "a"]}]).config_hash()
    off = ProcessorChain([CONFIG[0], {**CONFIG[1], "enabled": False}, CONFIG[2]])
    assert off.config_hash() == config_hash(validate_processors([CONFIG[0], CONFIG[2]])) != a.config_hash()


def test_config_hash_changes_with_parameters():
    assert ProcessorChain(CONFIG).config_hash() != ProcessorChain([{**CONFIG[0], "n": 3}, *CONFIG[1:]]).config_hash()


def test_a_failing_processor_is_reported_and_skipped():
    history = steps(4)
    chain = ProcessorChain([{"type": "context_filter", "custom_filter": "tests.support.custom_filters:explode"},
                            {"type": "last_n_observations", "n": 1}])
    result = chain.apply(history)
    assert result.errors and result.errors[0].startswith("context_filter: ")
    assert result.messages == validate_processors([{"type": "last_n_observations", "n": 1}])[0](history)


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
    assert all(a is b for a, b in zip(first, second, strict=True))
    assert first[3] is not history[3]


def test_every_processor_field_has_a_description_for_the_panel():
    from swedeck.core.processors import PROCESSORS
    from swedeck.core.processors.base import field_docs

    assert field_docs(PROCESSORS["last_n_observations"])["n"] == "Observations kept in full."
    for name, model in PROCESSORS.items():
        docs = field_docs(model)
        for field_name in model.model_fields:
            if field_name in ("type", "enabled"):  # the panel shows these as the row itself
                continue
            assert docs.get(field_name), f"{name}.{field_name} has no description"
