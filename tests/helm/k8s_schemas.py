"""Offline schema validation of rendered manifests.

Kubernetes kinds are checked with kubernetes-validate, which ships the API's JSON schemas for
each minor version; its strict variant rejects any field the API does not define (a misspelt
or misplaced key that the API server would silently drop). Custom resources are checked
against schemas kept beside this module (tests/helm/schemas/<kind>-<group>-<version>.json).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate  # type: ignore[import-untyped]
from kubernetes_validate.utils import (  # type: ignore[import-untyped]
    SchemaNotFoundError,
    ValidationError,
    latest_version,
)

SCHEMAS = Path(__file__).parent / "schemas"
CUSTOM_GROUPS = ("keda.sh/",)
LATEST_KUBERNETES = str(latest_version())


@cache
def _custom_validator(kind: str, api_version: str) -> jsonschema.Draft7Validator:
    group, version = api_version.split("/")
    path = SCHEMAS / f"{kind.lower()}-{group.split('.')[0]}-{version}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no schema for {kind} {api_version}: add {path}")
    return jsonschema.Draft7Validator(json.loads(path.read_text()))


def schema_errors(manifest: Mapping[str, Any], kubernetes_version: str) -> list[str]:
    """Why the manifest does not match its kind's schema (empty: it matches)."""
    api_version, kind = manifest["apiVersion"], manifest["kind"]
    if api_version.startswith(CUSTOM_GROUPS):
        validator = _custom_validator(kind, api_version)
        return [
            f"{'/'.join(map(str, error.absolute_path))}: {error.message}"
            for error in validator.iter_errors(dict(manifest))
        ]
    try:
        kubernetes_validate.validate(dict(manifest), kubernetes_version, strict=True)
    except ValidationError as error:
        return [f"{'/'.join(map(str, error.path))}: {error.message}"]
    except SchemaNotFoundError as error:
        return [str(error.message)]
    return []
