"""The import graph keeps the architecture (docs/architecture.md, "Layout"):

- shared code (services/common) never imports a service or the command line;
- the two services never import each other; only the command line composes them;
- a query stage imports nothing of the transport (grpc, the generated stubs, transport/);
- a query stage imports no other stage: what two stages share lives in a module named for it
  (search, fusion, prompt, citations, reranking);
- a storage backend builds no provider;
- the indexer's main only wires: it defines no class.

Every import counts, including those inside functions (lazy imports are still dependencies).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVICES = Path(__file__).resolve().parents[2] / "services"
PACKAGES = {
    "common": SERVICES / "common" / "ragstream" / "common",
    "testing": SERVICES / "common" / "ragstream" / "testing",
    "indexer": SERVICES / "indexer" / "ragstream" / "indexer",
    "query": SERVICES / "query" / "ragstream" / "query",
    "cli": SERVICES / "cli" / "ragstream" / "cli",
}
PROVIDER_BUILDERS = {"build_embedder", "build_chat_model", "build_reranker", "EmbeddingScheduler"}


def imports(path: Path) -> Iterator[tuple[str, str]]:
    """(module, name) for every import in the file; name is "" for `import module`."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ""
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield node.module, alias.name


def modules(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def offenders(folder: Path, forbidden: tuple[str, ...]) -> list[str]:
    """`path imports target` for each import of a forbidden package (or of a name in it)."""
    files = [folder] if folder.is_file() else modules(folder)
    found = []
    for path in files:
        for module, name in imports(path):
            target = f"{module}.{name}" if name else module
            if any(target == f or target.startswith(f + ".") for f in forbidden):
                found.append(f"{path.name} imports {target}")
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("common", ("ragstream.indexer", "ragstream.query", "ragstream.cli")),
        ("testing", ("ragstream.indexer", "ragstream.query", "ragstream.cli")),
        ("indexer", ("ragstream.query", "ragstream.cli")),
        ("query", ("ragstream.indexer", "ragstream.cli")),
    ],
)
def test_shared_code_and_services_import_no_one_above_them(
    package: str, forbidden: tuple[str, ...]
) -> None:
    assert offenders(PACKAGES[package], forbidden) == []


def test_query_stages_import_nothing_of_the_transport() -> None:
    stages = PACKAGES["query"] / "stages"
    transport = ("grpc", "grpc_status", "ragstream.v1", "ragstream.query.transport")
    assert modules(stages), "no stage modules found"
    assert offenders(stages, transport) == []
    for engine_module in ("engine.py", "types.py"):
        assert offenders(PACKAGES["query"] / engine_module, transport) == []


def test_query_stages_import_no_other_stage() -> None:
    stages = PACKAGES["query"] / "stages"
    found = [
        offence
        for path in modules(stages)
        for offence in offenders(path, ("ragstream.query.stages",))
    ]
    assert modules(stages), "no stage modules found"
    assert found == []


def test_the_indexer_main_defines_no_class() -> None:
    main = PACKAGES["indexer"] / "main.py"
    tree = ast.parse(main.read_text(), str(main))
    assert [node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)] == []


def test_storage_backends_build_no_provider() -> None:
    storage = PACKAGES["common"] / "storage"
    built = [
        f"{path.name} imports {name}"
        for path in modules(storage)
        for module, name in imports(path)
        if module.startswith("ragstream.common.providers") and name in PROVIDER_BUILDERS
    ]
    assert built == []


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    """The checker itself: a lazy import inside a function is found."""
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from ragstream.query.transport import server\n")
    (tmp_path / "good.py").write_text("import ragstream.query.types\n")
    assert offenders(tmp_path, ("ragstream.query.transport",)) == [
        "bad.py imports ragstream.query.transport.server"
    ]


def _type_checking_imports(tree: ast.AST) -> set[ast.AST]:
    """The import nodes inside `if TYPE_CHECKING:` blocks (type-only: never run)."""
    guarded: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            for statement in node.body:
                guarded |= {
                    n for n in ast.walk(statement) if isinstance(n, ast.Import | ast.ImportFrom)
                }
    return guarded


def provider_imports(folder: Path) -> list[str]:
    """`path imports module` for each import of ragstream.common.providers that runs."""
    found = []
    for path in [folder] if folder.is_file() else modules(folder):
        tree = ast.parse(path.read_text(), str(path))
        guarded = _type_checking_imports(tree)
        for node in ast.walk(tree):
            if node in guarded:
                continue
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            found += [
                f"{path.name} imports {name}"
                for name in names
                if name == "ragstream.common.providers"
                or name.startswith("ragstream.common.providers.")
            ]
    return found


def test_storage_imports_providers_only_for_their_types() -> None:
    """Storage is given its providers: it may name their Protocols for the type checker, but
    loads no provider module (so a backend can never build one)."""
    assert modules(PACKAGES["common"] / "storage"), "no storage modules found"
    assert provider_imports(PACKAGES["common"] / "storage") == []


def test_the_provider_check_sees_a_violation(tmp_path: Path) -> None:
    """The checker itself: a lazy import is found, a TYPE_CHECKING one is allowed."""
    (tmp_path / "bad.py").write_text(
        "def f():\n    from ragstream.common.providers.embedding import build_embedder\n"
    )
    (tmp_path / "also_bad.py").write_text("import ragstream.common.providers\n")
    (tmp_path / "good.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ragstream.common.providers.embedding import Embedder\n"
    )
    assert provider_imports(tmp_path) == [
        "also_bad.py imports ragstream.common.providers",
        "bad.py imports ragstream.common.providers.embedding",
    ]
