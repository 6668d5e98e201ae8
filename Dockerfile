# syntax=docker/dockerfile:1
# One image for both roles; the command picks one:
#   ragstream serve --no-indexer --listen 0.0.0.0:50051    query service (gRPC)
#   ragstream indexer --health-listen 0.0.0.0:8081         indexer (Kafka consumer)
#   ragstream serve --listen 0.0.0.0:50051                 both, embedded backends (the default)
# Build: docker build -t ragstream:0.1.0 .   (pin PYTHON_IMAGE by digest for reproducible builds)

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# Builder: generates the protobuf code and installs ragstream and its dependencies into a venv.
# Every dependency ships as a wheel (or is pure Python), so no compiler is needed here either.
FROM ${PYTHON_IMAGE} AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src

# Every install is held to the versions in constraints.txt (`make lock`), as `make setup` is.
COPY constraints.txt ./
# Code generation tools live in their own venv, which stays in this stage
# (scripts/gen-proto.sh runs .venv/bin/python; see the Makefile's setup target).
RUN python -m venv .venv \
 && .venv/bin/pip install -c constraints.txt grpcio-tools mypy-protobuf

# Dependencies first: this layer is reused while only the code changes.
COPY pyproject.toml setup.py ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" \
      > /tmp/requirements.txt \
 && python -m venv /opt/ragstream \
 && /opt/ragstream/bin/pip install -c constraints.txt -r /tmp/requirements.txt

COPY proto ./proto
COPY scripts/gen-proto.sh ./scripts/gen-proto.sh
COPY services ./services
COPY README.md ./
# The generated code is written into the source tree before the package is built, so the
# installed package contains it; the last commands prove it and that the entry point starts.
RUN bash scripts/gen-proto.sh \
 && /opt/ragstream/bin/pip install --no-deps . \
 && /opt/ragstream/bin/python -c "import ragstream.v1.query_pb2_grpc" \
 && /opt/ragstream/bin/ragstream --help > /dev/null \
 && RAGSTREAM_MODEL_CACHE=/opt/ragstream/models /opt/ragstream/bin/python -m ragstream.common.providers.minilm_int8 \
 && /opt/ragstream/bin/pip uninstall --yes pip

# Runtime: the base image, the venv and an unprivileged user; nothing else.
FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="ragstream" \
      org.opencontainers.image.description="Streaming knowledge-graph RAG: indexer and gRPC query service" \
      org.opencontainers.image.licenses="Apache-2.0"
RUN groupadd --system --gid 10001 ragstream \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /tmp \
      --shell /usr/sbin/nologin ragstream \
 && install -d -o 10001 -g 10001 -m 0750 /data
COPY --from=builder /opt/ragstream /opt/ragstream
# HOME and TMPDIR point at /tmp, the one writable place when the root filesystem is read-only
# (Kubernetes mounts an emptyDir there); .pyc files were written at install time, and MiniLM's
# int8 graph was prepared into /opt/ragstream/models.
ENV PATH=/opt/ragstream/bin:$PATH \
    RAGSTREAM_MODEL_CACHE=/opt/ragstream/models \
    HOME=/tmp \
    TMPDIR=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    RAGSTREAM_DATA_DIR=/data
WORKDIR /tmp
USER 10001:10001
EXPOSE 50051 8081
ENTRYPOINT ["ragstream"]
CMD ["serve", "--listen", "0.0.0.0:50051"]
