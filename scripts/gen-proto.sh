#!/usr/bin/env bash
# Generates the Python code and type stubs for proto/ into its own package, ragstream.v1.
set -euo pipefail
cd "$(dirname "$0")/.."
out=services/common
rm -rf "$out/ragstream/v1"
PATH="$PWD/.venv/bin:$PATH" .venv/bin/python -m grpc_tools.protoc -Iproto \
  --python_out="$out" --pyi_out="$out" \
  --grpc_python_out="$out" --mypy_grpc_out="$out" \
  proto/ragstream/v1/*.proto
printf '"""Generated from proto/ragstream/v1 by scripts/gen-proto.sh; do not edit."""\n' \
  > "$out/ragstream/v1/__init__.py"
touch "$out/ragstream/v1/py.typed"
