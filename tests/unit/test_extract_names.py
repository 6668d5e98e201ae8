"""Entity names, keys and types: normalization rules and their stability."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragstream.common.config import ConfigError, load_settings
from ragstream.common.config_extraction import ExtractionConfig
from ragstream.indexer.stages.extract.names import (
    MAX_NAME_CHARS,
    clean_name,
    entity_key,
    valid_entity_type,
)


@pytest.mark.parametrize(
    "spelling", ["Tern S3", "tern  s3", " TERN S3 ", "Tern\tS3", "Tern\nS3", "ＴＥＲＮ Ｓ3"]
)
def test_spellings_of_one_name_share_a_key(spelling: str) -> None:
    assert entity_key(spelling) == "tern s3"


def test_keys_are_stable_values() -> None:
    # Stored keys depend on these exact outputs: a change here needs a re-index.
    assert entity_key("Halvorsen Aquatics") == "halvorsen aquatics"
    assert entity_key("周明哲") == "周明哲"
    assert entity_key("Straße") == "strasse"


def test_different_names_keep_different_keys() -> None:
    assert entity_key("Tern S3") != entity_key("Tern S3.1")
    assert entity_key("东海") != entity_key("东海海洋感知研究所")


@given(st.text())
def test_entity_key_is_idempotent(name: str) -> None:
    assert entity_key(entity_key(name)) == entity_key(name)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ('"Kestrel Polymers"', "Kestrel Polymers"),
        ("'Tern S3'", "Tern S3"),
        ("“Skua 3”", "Skua 3"),
        ("**Lena Voss**", "Lena Voss"),
        ("`Gannet Fleet`", "Gannet Fleet"),
        ("## Project Bulwark", "Project Bulwark"),
        ("(ESIOS)", "ESIOS"),
        ('["Mira Okafor"]', "Mira Okafor"),
        ("《东海海洋感知研究所》", "东海海洋感知研究所"),
        ("  Ingrid\n Halvorsen ", "Ingrid Halvorsen"),
        ("Skua (drone)", "Skua (drone)"),
        ("(a) and (b)", "(a) and (b)"),
        ("C#", "C#"),
        ("O'Brien", "O'Brien"),
        ('say "hi" now', 'say "hi" now'),
    ],
)
def test_clean_name_strips_wrapping_only(raw: str, clean: str) -> None:
    assert clean_name(raw) == clean


@pytest.mark.parametrize("raw", ["", "   ", '""', "()", "**", "「」", "\n"])
def test_clean_name_rejects_empty_names(raw: str) -> None:
    assert clean_name(raw) is None


def test_clean_name_truncates_long_names() -> None:
    cleaned = clean_name("x" * 1000)
    assert cleaned == "x" * MAX_NAME_CHARS


@given(st.text())
def test_clean_name_is_idempotent_and_bounded(name: str) -> None:
    cleaned = clean_name(name)
    if cleaned is not None:
        assert len(cleaned) <= MAX_NAME_CHARS
        assert cleaned == cleaned.strip()
        assert "\n" not in cleaned
        assert clean_name(cleaned) == cleaned


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("Person", "person"),
        ("ORGANIZATION", "organization"),
        ("Natural  Object", "natural_object"),
        ('"location"', "location"),
        ("人物", "人物"),
    ],
)
def test_entity_types_are_normalized(raw: str, normalized: str) -> None:
    assert valid_entity_type(raw) == normalized


@pytest.mark.parametrize("char", list("'()<>|/\\"))
def test_entity_types_with_markup_characters_are_rejected(char: str) -> None:
    assert valid_entity_type(f"per{char}son") is None


@pytest.mark.parametrize("raw", ["", "  ", "x" * 65])
def test_empty_or_overlong_types_are_rejected(raw: str) -> None:
    assert valid_entity_type(raw) is None


def test_extraction_config_defaults_and_normalized_types() -> None:
    cfg = ExtractionConfig()
    assert cfg.language == "auto"
    assert (cfg.gleaning, cfg.max_gleaning) == ("adaptive", 1)
    assert "person" in cfg.entity_types
    custom = ExtractionConfig.model_validate({"entity_types": ["Person", "Water Body", "person"]})
    assert custom.entity_types == ("person", "water_body")


def test_extraction_config_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAGSTREAM_CONFIG", raising=False)
    monkeypatch.setenv("RAGSTREAM_EXTRACTION__MAX_GLEANING", "2")
    monkeypatch.setenv("RAGSTREAM_EXTRACTION__LANGUAGE", "Chinese")
    monkeypatch.setenv("RAGSTREAM_EXTRACTION__ENTITY_TYPES", '["person", "vessel"]')
    cfg = load_settings().extraction
    assert (cfg.max_gleaning, cfg.language, cfg.entity_types) == (
        2,
        "Chinese",
        ("person", "vessel"),
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RAGSTREAM_EXTRACTION__ENTITY_TYPES", '["a/b"]'),
        ("RAGSTREAM_EXTRACTION__ENTITY_TYPES", "[]"),
        ("RAGSTREAM_EXTRACTION__MAX_GLEANING", "-1"),
    ],
)
def test_bad_extraction_settings_name_the_setting(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.delenv("RAGSTREAM_CONFIG", raising=False)
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=name):
        load_settings()
