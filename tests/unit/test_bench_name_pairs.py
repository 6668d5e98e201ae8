"""The near-name benchmark's reading of how two names differ."""

from __future__ import annotations

import pytest

from tests.bench.bench_name_pairs import how_they_differ


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [
        ("The Predator", "Predator", "article"),
        ("Albert", "Albert I", "number added"),
        ("976-EVIL", "976-EVIL 2", "number added"),
        ("Ernie Reyes Jr", "Ernie Reyes", "generation"),
        ("West Virginia Route 26", "West Virginia Route 28", "another number"),
        ("Karel Komzák II", "Karel Komzák III", "another number"),
        ("Butler", "Butlers", "plural"),
        ("Ancient Egypt", "Ancient Egyptian", "ending"),
        ("Manuel Pérez de Guzmán", "Pedro Pérez de Guzmán", "one word"),
        ("Korea", "South Korea", "contained"),
        ("Soviet Union", "USSR", "other"),
    ],
)
def test_how_two_near_names_differ(a: str, b: str, kind: str) -> None:
    assert how_they_differ(a, b) == kind
    assert how_they_differ(b, a) == kind
