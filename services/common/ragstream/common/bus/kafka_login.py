"""The SASL user and password of PLAIN and SCRAM, given in the settings or in files that
may be rotated while the process runs (`bus.kafka_security.sasl_*_file`).

aiokafka takes the user and password when a client is built and uses them for every
connection that client opens later, so a rotated password reaches a running process only
through new clients. `LoginSource.current()` is the login to build a client with now; the
publisher and the consumers ask before every publish and poll, and rebuild their client
when the answer changed. A file is read again only when its stat (device, inode, mtime,
size) changes, which makes asking cheap; Kubernetes updates a mounted Secret by swapping a
symlink, which changes the inode.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import SecretStr

from ragstream.common.config import ConfigError
from ragstream.common.config_kafka import SETTING, KafkaSecurityConfig

log = logging.getLogger(__name__)
Stamp = tuple[int, int, int, int]


@dataclass(frozen=True, slots=True)
class SaslLogin:
    """One user and password; the password stays out of repr."""

    username: str
    password: str = field(repr=False)

    def options(self) -> dict[str, str]:
        """The keyword arguments of an aiokafka client."""
        return {"sasl_plain_username": self.username, "sasl_plain_password": self.password}


class WatchedFile:
    """A one-line secret file, read again when it changes. Once read, a file that turns
    unreadable or empty (a Secret being replaced) keeps its last value, with a warning."""

    def __init__(self, setting: str, path: Path) -> None:
        self.setting = setting
        self.path = path
        self._stamp: Stamp | None = None
        self._text = ""
        self._problem = ""
        """The last problem logged: it is checked before every poll, and logged once."""

    def read(self) -> str:
        """The content without its line end; ConfigError if the first read fails."""
        try:
            # A stat of a local file is cheap enough for the event loop, before each poll.
            st = self.path.stat()
            stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
            if stamp == self._stamp:
                return self._text
            # `echo secret > file` and `kubectl create secret --from-file` keep the newline.
            text = self.path.read_text(encoding="utf-8").rstrip("\r\n")
        except (OSError, UnicodeDecodeError) as exc:
            return self._unusable(f"cannot read it ({exc})")
        if not text:
            return self._unusable("it is empty")
        self._stamp, self._text, self._problem = stamp, text, ""
        return text

    def _unusable(self, why: str) -> str:
        problem = f"{SETTING}.{self.setting} {self.path}: {why}"
        if self._stamp is None:
            raise ConfigError(problem)
        if problem != self._problem:
            log.warning("%s; keeping the value read before", problem)
            self._problem = problem
        return self._text


class LoginSource:
    """Where the login comes from: each of user and password a value or a watched file."""

    def __init__(self, username: str | WatchedFile, password: SecretStr | WatchedFile) -> None:
        self._username = username
        self._password = password

    @classmethod
    def of(cls, cfg: KafkaSecurityConfig) -> LoginSource:
        """The login of `cfg` (PLAIN or SCRAM); its files are read once here, so a missing
        or empty one is a ConfigError at start-up."""
        username: str | WatchedFile = cfg.sasl_username
        password: SecretStr | WatchedFile = cfg.sasl_password
        if cfg.sasl_username_file is not None:
            username = WatchedFile("sasl_username_file", cfg.sasl_username_file)
        if cfg.sasl_password_file is not None:
            password = WatchedFile("sasl_password_file", cfg.sasl_password_file)
        source = cls(username, password)
        source.current()
        return source

    @property
    def watched(self) -> bool:
        return isinstance(self._username, WatchedFile) or isinstance(self._password, WatchedFile)

    def current(self) -> SaslLogin:
        username = self._username
        password = self._password
        return SaslLogin(
            username.read() if isinstance(username, WatchedFile) else username,
            password.read() if isinstance(password, WatchedFile) else password.get_secret_value(),
        )

    def settings(self) -> str:
        """The settings that give the login, to name in an error or a log line."""
        names = []
        for name, source in (("sasl_username", self._username), ("sasl_password", self._password)):
            if isinstance(source, WatchedFile):
                names.append(f"{SETTING}.{source.setting} ({source.path})")
            else:
                names.append(f"{SETTING}.{name}")
        return " and ".join(names)
