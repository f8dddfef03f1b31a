"""Embeddings: the providers, the built-in model, the queue that feeds the index.

`queue` (the worker, the query cache), `jobs` (the job tables), `job_store`
(the queue's seam to them: SQLite's, or a store's own), `breaker`
(stop asking a failing provider), `secret_recheck` (vectors made again when
the secret detector learns more), `providers` (one module per provider
family), `model` (the built-in numpy encoder and its pinned files).
"""

from .breaker import CircuitBreaker
from .job_store import (
    PROCESS_INSTANCE,
    EnqueueSteps,
    JobSource,
    JobStore,
    Queued,
    SqliteJobs,
    enqueue_kinds,
)
from .jobs import (
    JOB_ERROR,
    JOB_PENDING,
    JOB_READY,
    KINDS,
    MAX_ATTEMPTS,
    MEMORIES,
    MESSAGES,
    RETRY_BASE,
    RETRY_FACTOR,
    Job,
    JobTables,
    QueueStatus,
    count_missing,
    sent_text,
    text_hash,
    vector_length,
)
from .model.download import ProgressCallback, download_model
from .model.encoder import BertEncoder, EncoderError
from .model.pins import (
    HF_BASE_URL,
    MODEL_SPECS,
    ModelFilesError,
    ModelSpec,
    default_model_for,
    install_from_folder,
)
from .providers import (
    HTTP_PROVIDERS,
    OPENAI_DEFAULT_URL,
    CannotConnectError,
    DimensionChangedError,
    EmbeddingProvider,
    HttpProvider,
    InvalidAuthError,
    InvalidSettingError,
    LocalProvider,
    ModelInfo,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
    looks_like_embedding_model,
    model_key,
    probe_dimension,
)
from .queue import EmbeddingQueue
from .secret_recheck import Batch, SecretChecks, Stale, recheck

__all__ = [
    "HF_BASE_URL",
    "HTTP_PROVIDERS",
    "JOB_ERROR",
    "JOB_PENDING",
    "JOB_READY",
    "KINDS",
    "MAX_ATTEMPTS",
    "MEMORIES",
    "MESSAGES",
    "MODEL_SPECS",
    "OPENAI_DEFAULT_URL",
    "PROCESS_INSTANCE",
    "RETRY_BASE",
    "RETRY_FACTOR",
    "Batch",
    "BertEncoder",
    "CannotConnectError",
    "CircuitBreaker",
    "DimensionChangedError",
    "EmbeddingProvider",
    "EmbeddingQueue",
    "EncoderError",
    "EnqueueSteps",
    "HttpProvider",
    "InvalidAuthError",
    "InvalidSettingError",
    "Job",
    "JobSource",
    "JobStore",
    "JobTables",
    "LocalProvider",
    "ModelFilesError",
    "ModelInfo",
    "ModelSpec",
    "ProgressCallback",
    "ProviderError",
    "ProviderTimeoutError",
    "QueueStatus",
    "Queued",
    "SecretChecks",
    "ServerError",
    "SqliteJobs",
    "Stale",
    "count_missing",
    "default_model_for",
    "download_model",
    "enqueue_kinds",
    "install_from_folder",
    "looks_like_embedding_model",
    "model_key",
    "probe_dimension",
    "recheck",
    "sent_text",
    "text_hash",
    "vector_length",
]
