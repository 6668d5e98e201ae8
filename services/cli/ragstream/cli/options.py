"""What the command line's commands share: the common options, and how a user's mistake
becomes one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, NoReturn

import typer

from ragstream.common.config import ConfigError, Settings, load_settings
from ragstream.common.errors import BackendUnavailableError
from ragstream.common.listen import ListenError

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML config file.")]
ServerOpt = Annotated[str, typer.Option("--server", help="host:port of ragstream serve.")]
WorkspaceOpt = Annotated[str, typer.Option("--workspace", "-w", help="Tenant workspace.")]
DEFAULT_SERVER = "127.0.0.1:50051"
USER_ERRORS = (ConfigError, BackendUnavailableError, ListenError)
"""What a user can fix; each carries a message that says how."""


def fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """Turns a user error into its one line and exit code 2."""
    try:
        yield
    except USER_ERRORS as exc:
        fail(str(exc))


def choice(option: str, value: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        fail(f"{option} {value!r} is not one of {', '.join(choices)}")
    return value


def settings_from(config: Path | None, **overrides: object) -> Settings:
    with reported():
        settings = load_settings(config, **{k: v for k, v in overrides.items() if v is not None})
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # The Elasticsearch client logs every request at INFO.
    logging.getLogger("elastic_transport").setLevel(max(logging.WARNING, logging.root.level))
    return settings
