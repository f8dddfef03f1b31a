"""Embedding providers: the kinds set-up offers, and every provider name in one place.

One module per provider family (`provider_ollama`, `provider_openai`,
`provider_gemini`, `provider_builtin`) over the shared contract
(`provider_base`), HTTP handling (`provider_http`) and errors
(`provider_errors`); callers import them all from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from .base import (
    MAX_DIMENSIONS,
    PROBE_TEXT,
    EmbeddingProvider,
    Matrix,
    ModelInfo,
    looks_like_embedding_model,
    model_key,
    probe_dimension,
    sort_models,
)
from .builtin import LocalEncoder, LocalProvider
from .errors import (
    CannotConnectError,
    DimensionChangedError,
    DimensionsOutOfRangeError,
    InputRejectedError,
    InvalidApiKeyError,
    InvalidAuthError,
    InvalidModelNameError,
    InvalidResponseError,
    InvalidSettingError,
    InvalidUrlError,
    ModelNotFoundError,
    NotEmbeddingModelError,
    ProviderError,
    ProviderTimeoutError,
    ServerError,
    UrlCredentialsWithKeyError,
)
from .gemini import GEMINI_DEFAULT_URL, GeminiProvider
from .http import (
    LIST_TIMEOUT,
    MAX_API_KEY_CHARS,
    MAX_MODEL_CHARS,
    MAX_URL_CHARS,
    REQUEST_TIMEOUT,
    Credentials,
    HttpProvider,
    check_api_key,
    join_credentials,
    split_url,
)
from .ollama import OLLAMA_DEFAULT_URL, OllamaProvider
from .openai import OPENAI_DEFAULT_URL, OpenAIProvider


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderKind:
    """How set-up asks for a provider and how it is built."""

    key: str
    default_url: str
    default_model: str
    factory: Callable[..., HttpProvider]


HTTP_PROVIDERS: Final[dict[str, ProviderKind]] = {
    OllamaProvider.kind: ProviderKind(
        key=OllamaProvider.kind,
        default_url=OLLAMA_DEFAULT_URL,
        default_model="nomic-embed-text",
        factory=OllamaProvider,
    ),
    OpenAIProvider.kind: ProviderKind(
        key=OpenAIProvider.kind,
        default_url=OPENAI_DEFAULT_URL,
        default_model="text-embedding-3-small",
        factory=OpenAIProvider,
    ),
    GeminiProvider.kind: ProviderKind(
        key=GeminiProvider.kind,
        default_url=GEMINI_DEFAULT_URL,
        default_model="gemini-embedding-001",
        factory=GeminiProvider,
    ),
}

__all__ = [
    "GEMINI_DEFAULT_URL",
    "HTTP_PROVIDERS",
    "LIST_TIMEOUT",
    "MAX_API_KEY_CHARS",
    "MAX_DIMENSIONS",
    "MAX_MODEL_CHARS",
    "MAX_URL_CHARS",
    "OLLAMA_DEFAULT_URL",
    "OPENAI_DEFAULT_URL",
    "PROBE_TEXT",
    "REQUEST_TIMEOUT",
    "CannotConnectError",
    "Credentials",
    "DimensionChangedError",
    "DimensionsOutOfRangeError",
    "EmbeddingProvider",
    "GeminiProvider",
    "HttpProvider",
    "InputRejectedError",
    "InvalidApiKeyError",
    "InvalidAuthError",
    "InvalidModelNameError",
    "InvalidResponseError",
    "InvalidSettingError",
    "InvalidUrlError",
    "LocalEncoder",
    "LocalProvider",
    "Matrix",
    "ModelInfo",
    "ModelNotFoundError",
    "NotEmbeddingModelError",
    "OllamaProvider",
    "OpenAIProvider",
    "ProviderError",
    "ProviderKind",
    "ProviderTimeoutError",
    "ServerError",
    "UrlCredentialsWithKeyError",
    "check_api_key",
    "join_credentials",
    "looks_like_embedding_model",
    "model_key",
    "probe_dimension",
    "sort_models",
    "split_url",
]
