# ragstream: every target installs what it needs through `setup`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
GEN := services/common/ragstream/v1
STAMP := $(VENV)/.installed
LOCK := constraints.txt
TOOLS := .cache/tools
DATA ?= $(abspath ../shared/data)
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: setup lock proto console lint test demo bench clean

setup: $(STAMP) $(GEN)/__init__.py

# Every install is held to the versions in $(LOCK); `make lock` renews them.
$(STAMP): pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c $(LOCK) grpcio-tools mypy-protobuf
	bash scripts/gen-proto.sh
	$(BIN)/pip install -q -c $(LOCK) -e '.[dev]'
	$(BIN)/python -m ragstream.common.providers.minilm_int8 >/dev/null  # MiniLM's int8 graph, once
	touch $@

# The pinned versions of every dependency (dev tools included) for every platform, resolved
# from pyproject.toml; commit the result.
lock:
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q uv
	$(BIN)/uv pip compile pyproject.toml --extra dev --universal --python-version 3.11 \
	  --upgrade --quiet --output-file $(LOCK)

$(GEN)/__init__.py: $(STAMP) $(wildcard proto/ragstream/v1/*.proto)
	bash scripts/gen-proto.sh

proto: $(STAMP)
	bash scripts/gen-proto.sh
	bash scripts/gen-go.sh
	bash scripts/buf.sh lint

# The console's vendored graph libraries, rebuilt from tools/console/package-lock.json;
# commit the lock and the console's vendor/ folder together.
console:
	bash tools/console/build.sh

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy services tests
	bash scripts/buf.sh lint
	bash scripts/buf.sh breaking
	bash scripts/gen-go.sh check

# Lint, then the whole suite; the helm binary and the container image (reused while the tree
# is unchanged) build beside the lint.
test: setup
	DATA=$(DATA) bash scripts/test.sh

demo: setup
	$(BIN)/python -m ragstream.cli.main demo

bench: setup
	RAGSTREAM_TEST_DATA=$(DATA) $(BIN)/python -m pytest -q -s tests/bench -o python_files='bench_*.py test_*.py'

clean:
	bash scripts/image.sh clean
	rm -rf $(VENV) $(GEN) .cache build
