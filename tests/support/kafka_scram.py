"""Setting a SCRAM user's password on the running test broker, as `kafka-configs --alter
--add-config 'SCRAM-SHA-256=[password=...]' --entity-type users` does: Kafka's
AlterUserScramCredentials request (API 51, KIP-554), sent with aiokafka's wire protocol over
the broker's PLAINTEXT listener. The client salts the password (PBKDF2, RFC 5802); the
broker keeps only the derived keys. The test broker's jars hold no command-line tools."""

from __future__ import annotations

import hashlib
import os
from typing import Any

from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    CompactArray,
    CompactBytes,
    CompactString,
    Int8,
    Int16,
    Int32,
    Schema,
    TaggedFields,
)

MECHANISMS = {"SCRAM-SHA-256": (1, "sha256"), "SCRAM-SHA-512": (2, "sha512")}
"""Kafka's ScramMechanism type codes and the hash of each mechanism."""
ITERATIONS = 4096
"""The fewest Kafka accepts."""


class AlterUserScramCredentialsResponse_v0(Response):  # type: ignore[misc]
    API_KEY = 51
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "results",
            CompactArray(
                ("user", CompactString("utf-8")),
                ("error_code", Int16),
                ("error_message", CompactString("utf-8")),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class AlterUserScramCredentialsRequest_v0(RequestStruct):  # type: ignore[misc]
    FLEXIBLE_VERSION = True
    API_KEY = 51
    API_VERSION = 0
    RESPONSE_TYPE = AlterUserScramCredentialsResponse_v0
    SCHEMA = Schema(
        (
            "deletions",
            CompactArray(
                ("name", CompactString("utf-8")), ("mechanism", Int8), ("tags", TaggedFields)
            ),
        ),
        (
            "upsertions",
            CompactArray(
                ("name", CompactString("utf-8")),
                ("mechanism", Int8),
                ("iterations", Int32),
                ("salt", CompactBytes),
                ("salted_password", CompactBytes),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class AlterUserScramCredentials(Request[AlterUserScramCredentialsRequest_v0]):  # type: ignore[misc]
    API_KEY = 51

    def __init__(self, upsertions: list[tuple[Any, ...]]) -> None:
        self._upsertions = upsertions

    def build(
        self, request_struct_class: type[AlterUserScramCredentialsRequest_v0]
    ) -> AlterUserScramCredentialsRequest_v0:
        return request_struct_class([], self._upsertions, {})


async def set_scram_password(bootstrap: str, user: str, mechanism: str, password: str) -> None:
    """Creates `user` or replaces its password; raises if the broker refuses."""
    code, digest = MECHANISMS[mechanism]
    salt = os.urandom(32)
    salted = hashlib.pbkdf2_hmac(digest, password.encode(), salt, ITERATIONS)
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        request = AlterUserScramCredentials([(user, code, ITERATIONS, salt, salted, {})])
        response = await client.send(client.get_random_node(), request)
    finally:
        await client.close()
    failed = [(name, err, text) for name, err, text, _ in response.results if err]
    if failed:
        raise RuntimeError(f"AlterUserScramCredentials refused: {failed}")
