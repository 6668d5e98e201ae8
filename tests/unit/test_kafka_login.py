"""The SASL login of bus.kafka_security read from files: read when a client is built, the
new content after the file is replaced, the last good content while a replacement is
unusable, and a clear error naming the setting when the first read fails."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ragstream.common.bus.kafka_security import kafka_options
from ragstream.common.config import ConfigError, load_settings

SECRET = "pw-first-5b10"


def options(**security: Any) -> Any:
    fields = {"protocol": "SASL_PLAINTEXT", "sasl_mechanism": "SCRAM-SHA-256", **security}
    return kafka_options(load_settings(bus={"backend": "kafka", "kafka_security": fields}).bus)


def replace(path: Path, text: str) -> None:
    """As a Secret volume does: a new file swapped in (a new inode)."""
    staged = path.with_name(path.name + ".new")
    staged.write_text(text)
    os.replace(staged, path)


def test_the_password_file_is_read_again_once_replaced(tmp_path: Path) -> None:
    password = tmp_path / "password"
    password.write_text(SECRET + "\n")
    opts = options(sasl_username="indexer", sasl_password_file=str(password))
    first = opts.current_login()
    assert opts.client()["sasl_plain_password"] == SECRET  # without the line end
    assert opts.client()["sasl_plain_username"] == "indexer"
    assert opts.current_login() == first
    replace(password, "pw-second-77c3")
    assert opts.current_login() != first
    assert opts.client()["sasl_plain_password"] == "pw-second-77c3"
    assert SECRET not in repr(opts) and SECRET not in repr(first)


def test_the_user_can_come_from_a_file_too(tmp_path: Path) -> None:
    (tmp_path / "user").write_text("indexer-2\r\n")
    (tmp_path / "password").write_text(SECRET)
    opts = options(
        sasl_username_file=str(tmp_path / "user"),
        sasl_password_file=str(tmp_path / "password"),
    )
    assert opts.current_login().username == "indexer-2"
    assert f"sasl_username_file ({tmp_path / 'user'})" in opts.login_settings()


def test_an_unusable_replacement_keeps_the_last_password(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    password = tmp_path / "password"
    password.write_text(SECRET)
    opts = options(sasl_username="indexer", sasl_password_file=str(password))
    replace(password, "\n")
    assert opts.current_login().password == SECRET
    assert opts.current_login().password == SECRET
    assert "sasl_password_file" in caplog.text and "empty" in caplog.text
    assert caplog.text.count("keeping the value read before") == 1  # not at every poll
    password.unlink()
    assert opts.current_login().password == SECRET
    assert SECRET not in caplog.text


@pytest.mark.parametrize(("content", "why"), [(None, "cannot read it"), ("\n", "it is empty")])
def test_an_unusable_file_at_start_up_names_its_setting(
    tmp_path: Path, content: str | None, why: str
) -> None:
    password = tmp_path / "password"
    if content is not None:
        password.write_text(content)
    with pytest.raises(ConfigError, match=f"sasl_password_file {password}: {why}"):
        options(sasl_username="indexer", sasl_password_file=str(password))
