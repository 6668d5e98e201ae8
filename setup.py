"""Maps the namespace package `ragstream` onto its four source roots (see pyproject.toml).

A tree without the generated protobuf code (a fresh clone) gets it here, so `pip install .`
alone builds a working package: the same code scripts/gen-proto.sh writes, without the
mypy stubs that only the development setup needs.
"""

from importlib import resources
from pathlib import Path

from setuptools import find_namespace_packages, setup

ROOT = Path(__file__).resolve().parent
ROOTS = ("services/common", "services/indexer", "services/query", "services/cli")
PROTO = ROOT / "proto"
GENERATED = ROOT / "services/common/ragstream/v1"


def generate_protobuf_code() -> None:
    if (GENERATED / "__init__.py").is_file():
        return
    from grpc_tools import protoc  # a build requirement (pyproject.toml)

    out = ROOT / "services/common"
    well_known = resources.files("grpc_tools") / "_proto"
    protos = sorted(str(path) for path in (PROTO / "ragstream/v1").glob("*.proto"))
    outputs = [f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}"]
    code = protoc.main(["protoc", f"-I{PROTO}", f"-I{well_known}", *outputs, *protos])
    if code != 0:
        raise SystemExit(f"generating the protobuf code failed (protoc exit code {code})")
    (GENERATED / "__init__.py").write_text(
        '"""Generated from proto/ragstream/v1 when the package was built; do not edit."""\n'
    )
    (GENERATED / "py.typed").touch()


generate_protobuf_code()
packages: list[str] = []
package_dir: dict[str, str] = {}
for root in ROOTS:
    for package in find_namespace_packages(root, include=["ragstream.*"]):
        packages.append(package)
        package_dir[package] = f"{root}/{package.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
