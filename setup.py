"""Maps the namespace package `ragstream` onto its four source roots (see pyproject.toml)."""

from setuptools import find_namespace_packages, setup

ROOTS = ("services/common", "services/indexer", "services/query", "services/cli")

packages: list[str] = []
package_dir: dict[str, str] = {}
for root in ROOTS:
    for package in find_namespace_packages(root, include=["ragstream.*"]):
        packages.append(package)
        package_dir[package] = f"{root}/{package.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)
