"""Typed configuration, loaded once per process.

Sources, highest first: keyword arguments, environment variables (`RAGSTREAM_` prefix,
`__` between section and field, e.g. `RAGSTREAM_LLM__MODEL`), the TOML file named by
`RAGSTREAM_CONFIG` (or passed to `load_settings`), then the defaults below. An invalid
value stops startup with a ConfigError naming the setting; nothing falls back silently.
Each stage receives only its own section (e.g. `chunk(text, settings.chunking)`).
"""

from __future__ import annotations

import os
import re
import tomllib
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from ragstream.common.config_chunking import ChunkingConfig
from ragstream.common.config_communities import CommunitiesConfig
from ragstream.common.config_extraction import ExtractionConfig
from ragstream.common.config_kafka import KafkaSecurityConfig
from ragstream.common.config_rerank import RerankConfig
from ragstream.common.config_resolution import ResolutionConfig
from ragstream.common.config_storage import StorageConfig
from ragstream.common.cores import available_cores
from ragstream.common.listen import ListenError, parse_listen
from ragstream.common.text.language import parse_languages

WORKSPACE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
_HOST_NAME = re.compile(r"^\.?[A-Za-z0-9_]([A-Za-z0-9_.-]{0,252})$")


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerConfig(Section):
    listen: str = "127.0.0.1:50051"
    """host:port (or [ipv6]:port) of the gRPC server."""
    max_message_mb: int = Field(16, ge=1, le=256)
    """Largest request or response message."""
    max_concurrent_queries: int = Field(default_factory=lambda: 4 * available_cores(), ge=1)
    """Queries working at once (default: 4 per usable core); more wait in the queue. A query
    waiting on a remote model (LLM, embeddings, reranker) lends its slot to another."""
    max_queued_queries: int = Field(1024, ge=0)
    """Queries allowed to wait, for a slot or on a remote model: a bound of memory, not of
    cores; beyond it RESOURCE_EXHAUSTED. A query is refused earlier only when its predicted
    wait and service exceed its deadline."""
    max_concurrent_publishes: int = Field(16, ge=1)
    """PublishDocuments and DeleteDocuments calls served at once; more wait in the queue."""
    max_queued_publishes: int = Field(64, ge=0)
    """Publish and delete calls allowed to wait; beyond that RESOURCE_EXHAUSTED."""
    http_listen: str | None = None
    """host:port (or [ipv6]:port) of the HTTP/JSON API and web console; unset: no HTTP port."""
    http_cors_origins: tuple[str, ...] = ()
    """Origins (e.g. https://app.example.com, or "*") whose pages may call the HTTP API from
    a browser; empty: no CORS headers, so only same-origin pages (the console) can."""
    http_allowed_hosts: tuple[str, ...] = ()
    """Names the HTTP port may be reached by (its requests' Host header), beside IP addresses,
    localhost and the http_listen host: e.g. ragstream.example.com, or .example.com for a
    domain and every name under it, or "*" for any; other names are refused (403), so that a
    page of another site cannot reach the port by rebinding its own name to the address."""

    @field_validator("http_allowed_hosts")
    @classmethod
    def _host_names(cls, names: tuple[str, ...]) -> tuple[str, ...]:
        for name in names:
            if name != "*" and not _HOST_NAME.match(name):
                raise ValueError(
                    f"{name!r} is not a host name: give a name (ragstream.example.com), a "
                    'domain (.example.com) or "*", without scheme or port'
                )
        return names

    @field_validator("listen", "http_listen")
    @classmethod
    def _listenable(cls, listen: str | None) -> str | None:
        try:
            if listen is not None:
                parse_listen(listen)
        except ListenError as exc:
            raise ValueError(str(exc)) from None
        return listen


class AuthConfig(Section):
    """Who may call the gRPC services, and for which workspaces.

    Off by default so that the embedded demo runs with no setup; `serve` warns when it
    listens beyond loopback while off. Health checks and reflection never need a token.
    """

    enabled: bool = False
    """Require `authorization: Bearer <token>` on every QueryService and IngestService call."""
    tokens_file: Path | None = None
    """TOML or JSON file: `[[tokens]]` entries with `name`, `sha256` (hex digest of the token;
    or `token`, the token itself) and `workspaces` (names, or "*" for all)."""
    tls_cert: Path | None = None
    """PEM certificate chain of the server; with tls_key, the server speaks TLS."""
    tls_key: Path | None = None
    client_ca: Path | None = None
    """PEM CA bundle; when set, clients must present a certificate it signed (mTLS)."""

    @model_validator(mode="after")
    def _consistent(self) -> AuthConfig:
        if self.enabled and self.tokens_file is None:
            raise ValueError("auth.tokens_file is required when auth.enabled is true")
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("auth.tls_cert and auth.tls_key must be set together")
        if self.client_ca is not None and self.tls_cert is None:
            raise ValueError("auth.client_ca needs auth.tls_cert and auth.tls_key (mTLS)")
        return self


class EmbeddingConfig(Section):
    provider: Literal["minilm", "e5", "openai", "hash"] = "minilm"
    """minilm: all-MiniLM-L6-v2 run locally on ONNX Runtime (offline default, English);
    e5: multilingual-e5-small run locally (offline, multilingual, slower); openai: any
    OpenAI-compatible /v1/embeddings endpoint; hash: hashed bag of words (tests only)."""
    model: str = ""
    """Model name for the openai provider."""
    languages: str = ""
    """Languages the model serves: comma-separated ISO 639-1 codes (e.g. "en,zh"), or "any".
    Texts in other languages get no vector and are searched by BM25 alone. Empty: what the
    provider declares (minilm: en; e5, openai, hash: any)."""
    base_url: str = ""
    api_key: SecretStr = SecretStr("")
    dimensions: int = Field(0, ge=0)
    """Vector size for openai/hash providers (0: the model's own)."""
    batch_size: int = Field(32, ge=1, le=2048)
    """Most texts in one provider call."""
    batch_tokens: int = Field(16000, ge=64)
    """Most tokens in one provider call."""
    batch_window_ms: float = Field(5.0, ge=0, le=1000)
    """How long the scheduler waits for more requests to fill a batch; a request that finds
    it idle (nothing queued or in flight) is sent at once."""
    concurrency: int = Field(2, ge=1, le=64)
    """Provider calls in flight at once."""
    timeout_s: float = Field(60.0, gt=0)
    """Limit on one HTTP attempt."""
    max_retries: int = Field(3, ge=0, le=10)
    """Retries after the first attempt, with exponential backoff: connection errors,
    timeouts, 408, 409, 429 and 5xx."""

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, value: str) -> str:
        return ",".join(sorted(parse_languages(value.split(",")))) if value.strip() else ""

    @model_validator(mode="after")
    def _model_when_openai(self) -> EmbeddingConfig:
        if self.provider == "openai" and not self.model:
            raise ValueError("embedding.model is required when embedding.provider is 'openai'")
        return self


class LLMConfig(Section):
    provider: Literal["none", "openai"] = "none"
    """none: extractive answers and the NLP extractor (offline default)."""
    model: str = ""
    base_url: str = ""
    api_key: SecretStr = SecretStr("")
    temperature: float = Field(0.0, ge=0, le=2)
    context_tokens: int = Field(32768, ge=512)
    """The model's context window, for prompt budgets."""
    max_output_tokens: int = Field(2048, ge=16)
    timeout_s: float = Field(120.0, gt=0)
    """Limit on one HTTP attempt; for a streamed answer, on each wait for more of it."""
    max_retries: int = Field(3, ge=0, le=10)
    """Retries after the first attempt, with exponential backoff: connection errors,
    timeouts, 408, 409, 429 and 5xx (a streamed answer only before its first part)."""
    concurrency: int = Field(8, ge=1, le=256)
    """Requests to the LLM in flight at once, per process. More wait in the client's queue,
    served a query's requests before the indexer's and the oldest query first (its answer
    before the keywords of queries received since it), which the query service's admission
    control counts: with a slow model, a query that would not finish before its deadline
    behind that queue is refused at once."""

    @model_validator(mode="after")
    def _model_when_openai(self) -> LLMConfig:
        if self.provider == "openai" and not self.model:
            raise ValueError("llm.model is required when llm.provider is 'openai'")
        return self


class QueryDefaults(Section):
    mode: Literal["local", "global", "hybrid", "mix", "naive", "bypass"] = "mix"
    top_k: int = Field(40, ge=1, le=1000)
    chunk_top_k: int = Field(20, ge=1, le=1000)
    max_entity_tokens: int = Field(6000, ge=0)
    max_relation_tokens: int = Field(8000, ge=0)
    max_total_tokens: int = Field(30000, ge=256)
    related_chunk_number: int = Field(5, ge=1, le=100)
    kg_chunk_pick_method: Literal["VECTOR", "WEIGHT"] = "VECTOR"
    cosine_threshold: float = Field(0.2, ge=-1, le=1)
    rrf_k: int = Field(60, ge=1)
    """Reciprocal rank fusion constant."""
    candidates: int = Field(50, ge=1, le=1000)
    """Hits each of BM25 and dense search contribute before fusion."""
    response_type: str = "Multiple Paragraphs"
    rewrite: Literal["none", "hyde", "multi_query"] = "none"
    """Query rewriting by the LLM before the searches (off by default: measure first)."""
    max_sub_queries: int = Field(3, ge=1, le=8)
    """multi_query: at most this many sub-queries besides the question."""
    rewrite_min_seconds: float = Field(2.0, ge=0)
    """Rewriting is skipped when less than this is left before the caller's deadline."""


class BusConfig(Section):
    backend: Literal["sqlite", "kafka"] = "sqlite"
    topic_prefix: str = Field("ragstream", pattern=r"^[A-Za-z0-9._-]+$")
    kafka_bootstrap: str = "localhost:9092"
    partitions: int = Field(6, ge=1)
    """Partitions of each topic, set when the topic is created (Kafka: by `ragstream
    topics`; the embedded bus: by its first record); the ceiling of indexer processes."""
    member: int = Field(0, ge=0)
    """The embedded bus: which of the `indexer.processes` this process is (its consumers
    read the partitions p with p % processes == member). Set by the process that starts
    the others (indexer/members.py); leave it at 0."""
    group_id: str = "ragstream-indexer"
    kafka_security: KafkaSecurityConfig = KafkaSecurityConfig()
    """TLS and SASL of every Kafka client (config_kafka.py)."""
    connect_retry_s: float = Field(60.0, ge=0)
    """How long opening the Kafka bus retries, with capped exponential backoff, while the
    brokers cannot be reached or refuse the credentials; then the process stops with the
    reason. 0: one attempt."""


class ElasticsearchConfig(Section):
    hosts: list[str] = ["http://localhost:9200"]
    username: str = ""
    password: SecretStr = SecretStr("")
    api_key: SecretStr = SecretStr("")
    index_prefix: str = Field("ragstream", pattern=r"^[a-z0-9][a-z0-9_-]*$")
    verify_certs: bool = True
    request_timeout_s: float = Field(30.0, gt=0)


class NebulaConfig(Section):
    addrs: str = "127.0.0.1:9669"
    """Comma-separated graphd host:port list."""
    user: str = "root"
    password: SecretStr = SecretStr("nebula")
    space_prefix: str = Field("ragstream", pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
    pool_size: int = Field(10, ge=1, le=256)
    timeout_ms: int = Field(10000, ge=100)


class IndexerConfig(Section):
    max_document_bytes: int = Field(10_000_000, ge=1)
    """Larger events are rejected (dead-lettered) rather than indexed."""
    concurrency: int = Field(4, ge=1, le=256)
    """Documents processed at once (each document's events stay in order)."""
    merge_concurrency: int = Field(32, ge=1, le=1024)
    """Description summaries (LLM calls) of one merge batch in flight at once."""
    merge_batch_size: int = Field(1000, ge=1)
    """Graph-merge events per poll. One poll is one batch: one set of store reads and writes
    and its embeddings in as few requests as the scheduler allows, committed as a whole (a
    crash redoes at most one batch). A key seen several times in one poll is merged once."""
    merge_settle_s: float = Field(5.0, ge=0)
    """While document events are queued, merges wait up to this long for them: a burst of
    changes that touch one key then costs one merge (and one summary), not one each."""
    batch_size: int = Field(64, ge=1)
    retry_backoff_s: float = Field(1.0, gt=0)
    max_retries: int = Field(5, ge=0)
    processes: int = Field(1, ge=1, le=64)
    """The embedded bus: processes that index, each reading its share of the topics'
    partitions (at most `bus.partitions`): the one running the stages starts the others
    (indexer/members.py). With Kafka, run more `ragstream indexer` replicas instead."""


class Settings(BaseSettings):
    """Everything ragstream reads from its environment."""

    model_config = SettingsConfigDict(
        env_prefix="RAGSTREAM_",
        env_nested_delimiter="__",
        extra="forbid",
        frozen=True,
    )

    data_dir: Path = Path("ragstream-data")
    """Where the embedded backends keep their SQLite database."""
    workspace: str = Field("default", pattern=WORKSPACE_PATTERN)
    """The workspace used when a request names none."""
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    server: ServerConfig = ServerConfig()
    auth: AuthConfig = AuthConfig()
    chunking: ChunkingConfig = ChunkingConfig()
    embedding: EmbeddingConfig = EmbeddingConfig()
    llm: LLMConfig = LLMConfig()
    extraction: ExtractionConfig = ExtractionConfig()
    query: QueryDefaults = QueryDefaults()
    bus: BusConfig = BusConfig()
    storage: StorageConfig = StorageConfig()
    indexer: IndexerConfig = IndexerConfig()
    communities: CommunitiesConfig = CommunitiesConfig()
    resolution: ResolutionConfig = ResolutionConfig()
    elasticsearch: ElasticsearchConfig = ElasticsearchConfig()
    nebula: NebulaConfig = NebulaConfig()
    rerank: RerankConfig = RerankConfig()

    @model_validator(mode="after")
    def _processes_fit_the_partitions(self) -> Settings:
        processes = self.indexer.processes
        if processes > self.bus.partitions:
            raise ValueError(
                f"indexer.processes ({processes}) is more than bus.partitions "
                f"({self.bus.partitions}): the processes beyond would have nothing to read"
            )
        if self.bus.member >= processes:
            raise ValueError(
                f"bus.member ({self.bus.member}) must be below indexer.processes ({processes})"
            )
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        config_file = _config_file.get() or os.environ.get("RAGSTREAM_CONFIG")
        if config_file:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=config_file))
        return tuple(sources)


_config_file: ContextVar[str | None] = ContextVar("ragstream_config_file", default=None)
"""The file `load_settings` was given, for `settings_customise_sources` (a classmethod that
pydantic calls with no way to pass it one); set only for that call (no other load sees it)."""


class ConfigError(Exception):
    """A setting is invalid; the message names it."""


def load_settings(config_file: Path | None = None, **overrides: Any) -> Settings:
    """Loads and validates the settings once; raises ConfigError naming each bad setting."""
    named = str(config_file) if config_file is not None else os.environ.get("RAGSTREAM_CONFIG")
    if named and not Path(named).is_file():
        raise ConfigError(f"config file not found: {named}")
    token = _config_file.set(named)
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {named} is not valid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read config file {named}: {exc.strerror or exc}") from None
    finally:
        _config_file.reset(token)


def _describe(exc: ValidationError) -> str:
    """One line per bad setting, each naming the setting and its environment variable."""
    lines = []
    for error in exc.errors():
        if not error["loc"]:  # a rule between settings: its message names them
            lines.append(str(error["msg"]).removeprefix("Value error, "))
            continue
        path = ".".join(str(part) for part in error["loc"])
        env = "RAGSTREAM_" + "__".join(str(part).upper() for part in error["loc"])
        lines.append(f"{path} ({env}): {error['msg']}")
    if len(lines) == 1:
        return f"invalid configuration: {lines[0]}"
    return "\n  ".join(["invalid configuration:", *lines])
