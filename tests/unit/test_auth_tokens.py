"""Tokens files, bearer tokens, grants and the exposure warning."""

import json
import logging
from pathlib import Path

import pytest

from ragstream.common.config import AuthConfig, ConfigError, load_settings
from ragstream.query.transport.auth import (
    Grant,
    TokenAuthenticator,
    Unauthenticated,
    bearer_token,
    exposed_without_auth,
    is_loopback,
    token_digest,
    warn_if_exposed,
)

ALPHA = "alpha-token-4f1c9e"
ADMIN = "admin-token-77aa01"


def write_tokens(tmp_path: Path, text: str, suffix: str = ".toml") -> Path:
    path = tmp_path / f"tokens{suffix}"
    path.write_text(text)
    return path


def test_toml_file_with_digests_and_plain_tokens(tmp_path: Path) -> None:
    path = write_tokens(
        tmp_path,
        f"""
[[tokens]]
name = "alpha"
sha256 = "{token_digest(ALPHA).upper()}"
workspaces = ["alpha", "shared"]

[[tokens]]
name = "admin"
token = "{ADMIN}"
workspaces = ["*"]
""",
    )
    auth = TokenAuthenticator.from_file(path)
    alpha = auth.authenticate([("authorization", f"Bearer {ALPHA}")])
    assert alpha == Grant("alpha", frozenset({"alpha", "shared"}))
    assert alpha.allows("shared") and not alpha.allows("beta")
    admin = auth.authenticate([("user-agent", "x"), ("authorization", f"bearer  {ADMIN} ")])
    assert admin.allows("anything")


def test_json_file(tmp_path: Path) -> None:
    data = {"tokens": [{"name": "a", "token": ALPHA, "workspaces": ["alpha"]}]}
    path = write_tokens(tmp_path, json.dumps(data), ".json")
    grant = TokenAuthenticator.from_file(path).authenticate([("authorization", f"Bearer {ALPHA}")])
    assert grant.name == "a"


@pytest.mark.parametrize(
    "metadata",
    [[], [("authorization", "Basic abc")], [("authorization", "Bearer ")], [("x", ALPHA)]],
)
def test_calls_without_a_bearer_token(metadata: list[tuple[str, str]]) -> None:
    assert bearer_token(metadata) is None
    auth = TokenAuthenticator({token_digest(ALPHA): Grant("a", frozenset({"a"}))})
    with pytest.raises(Unauthenticated, match="missing"):
        auth.authenticate(metadata)


def test_unknown_token() -> None:
    auth = TokenAuthenticator({token_digest(ALPHA): Grant("a", frozenset({"a"}))})
    with pytest.raises(Unauthenticated, match="unknown"):
        auth.authenticate([("authorization", "Bearer guess")])


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            f'name = "a"\nworkspaces = ["a"]\ntoken = "{ALPHA}"\nsha256 = "{"0" * 64}"',
            "exactly one",
        ),
        ('name = "a"\nworkspaces = ["a"]', "exactly one"),
        (f'name = "a"\nworkspaces = []\ntoken = "{ALPHA}"', "workspaces"),
        (f'name = "a"\nworkspaces = ["no spaces"]\ntoken = "{ALPHA}"', "workspace names"),
        ('name = "a"\nworkspaces = ["a"]\nsha256 = "abc"', "sha256"),
        (f'name = "a"\nworkspaces = ["a"]\ntoken = "{ALPHA}"\nextra = 1', "extra"),
    ],
)
def test_bad_entries_are_config_errors_that_never_quote_the_token(
    tmp_path: Path, entry: str, problem: str
) -> None:
    path = write_tokens(tmp_path, f"[[tokens]]\n{entry}\n")
    with pytest.raises(ConfigError, match=problem) as caught:
        TokenAuthenticator.from_file(path)
    assert ALPHA not in str(caught.value)


def test_a_token_given_twice_is_an_error(tmp_path: Path) -> None:
    entry = f'[[tokens]]\nname = "{{}}"\ntoken = "{ALPHA}"\nworkspaces = ["a"]\n'
    path = write_tokens(tmp_path, entry.format("one") + entry.format("two"))
    with pytest.raises(ConfigError, match="'two' repeats"):
        TokenAuthenticator.from_file(path)


def test_unreadable_or_malformed_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        TokenAuthenticator.from_file(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        TokenAuthenticator.from_file(write_tokens(tmp_path, "[[tokens"))


def test_auth_settings_must_be_complete() -> None:
    with pytest.raises(ConfigError, match="tokens_file is required"):
        load_settings(auth={"enabled": True})
    with pytest.raises(ConfigError, match="set together"):
        load_settings(auth={"tls_cert": "cert.pem"})
    with pytest.raises(ConfigError, match="client_ca needs"):
        load_settings(auth={"client_ca": "ca.pem"})


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.3.2.1", True),
        ("localhost", True),
        ("[::1]", True),
        ("0.0.0.0", False),
        ("", False),
        ("[::]", False),
        ("10.1.2.3", False),
        ("ragstream.internal", False),
    ],
)
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_warns_only_when_reachable_from_elsewhere_without_auth(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    off = AuthConfig()
    tokens = AuthConfig(enabled=True, tokens_file=tmp_path / "t.toml")
    mtls = AuthConfig(tls_cert=Path("c"), tls_key=Path("k"), client_ca=Path("ca"))
    assert exposed_without_auth("0.0.0.0:50051", off)
    assert exposed_without_auth(":50051", off)
    assert not exposed_without_auth("127.0.0.1:50051", off)
    assert not exposed_without_auth("0.0.0.0:50051", tokens)
    assert not exposed_without_auth("0.0.0.0:50051", mtls)
    with caplog.at_level(logging.WARNING, logger="ragstream.query.transport.auth"):
        warn_if_exposed("127.0.0.1:50051", off)
        assert caplog.records == []
        warn_if_exposed("0.0.0.0:50051", off)
    assert "beyond loopback with authentication off" in caplog.text
