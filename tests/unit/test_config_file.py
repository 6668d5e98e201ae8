"""A config file passed to load_settings is read by that load alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ragstream.common.config import Settings, load_settings


def test_a_config_file_reaches_only_its_own_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGSTREAM_CONFIG", raising=False)
    path = tmp_path / "debug.toml"
    path.write_text('log_level = "DEBUG"\n')
    assert Settings().log_level != "DEBUG"
    assert load_settings(path).log_level == "DEBUG"
    assert "RAGSTREAM_CONFIG" not in os.environ
    assert load_settings().log_level != "DEBUG"


def test_the_environment_still_names_a_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "debug.toml"
    path.write_text('log_level = "DEBUG"\n')
    monkeypatch.setenv("RAGSTREAM_CONFIG", str(path))
    assert load_settings().log_level == "DEBUG"
