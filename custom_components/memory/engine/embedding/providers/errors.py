"""Embedding provider errors: each failure with a stable key and placeholders.

Callers decide between "the provider is down" (trip the breaker, keep the
work) and "this text was refused" (count it against the item) by type; the
HA side translates each `key`. No message holds an API key or a text.
"""

from __future__ import annotations

from typing import ClassVar


class ProviderError(Exception):
    """An embedding request failed; `key` names the kind for translations.

    `provider_down` errors concern the provider as a whole (it is unreachable,
    refuses the key, lost the model): callers stop sending it work for a
    while. Others concern the texts of one request.
    """

    key: ClassVar[str] = "provider_error"
    provider_down: ClassVar[bool] = True

    def __init__(self, message: str, **placeholders: str) -> None:
        """Keep the placeholders for translated messages."""
        super().__init__(message)
        self.placeholders = placeholders


class CannotConnectError(ProviderError):
    """No answer: refused, unreachable, DNS, TLS."""

    key = "cannot_connect"


class ServerError(ProviderError):
    """The server answered with a 5xx or 429: up, but not working now."""

    key = "server_error"


class ProviderTimeoutError(ProviderError):
    """No complete answer within the time allowed."""

    key = "timeout"


class InvalidAuthError(ProviderError):
    """The server refused the API key (401/403, or Gemini's invalid key)."""

    key = "invalid_auth"


class ModelNotFoundError(ProviderError):
    """The server does not know the model."""

    key = "model_not_found"


class NotEmbeddingModelError(ProviderError):
    """The model exists but does not make embeddings (a chat model)."""

    key = "not_an_embedding_model"


class InvalidResponseError(ProviderError):
    """The answer is not what the protocol promises (malformed JSON, shape)."""

    key = "invalid_response"


class DimensionsOutOfRangeError(InvalidResponseError):
    """The model's vectors are longer than the store supports."""

    key = "dimensions_out_of_range"


class DimensionChangedError(ProviderError):
    """The model now makes vectors of another length than it did before."""

    key = "dimension_changed"


class InvalidSettingError(ProviderError):
    """A URL, key or model name no request can be made with; nothing was sent.

    `field` names the set-up field at fault, for the form to mark it.
    """

    field: ClassVar[str] = "url"


class InvalidUrlError(InvalidSettingError):
    """Not an http(s) URL of a server: no scheme, bad port, spaces, NUL, ..."""

    key = "invalid_url"


class UrlCredentialsWithKeyError(InvalidSettingError):
    """A user and password in the URL and an API key: only one can be sent."""

    key = "url_credentials_with_key"


class InvalidApiKeyError(InvalidSettingError):
    """A key that cannot go in an HTTP header (line breaks, non-ASCII, huge)."""

    key = "invalid_api_key"
    field = "api_key"


class InvalidModelNameError(InvalidSettingError):
    """A model name the provider's API cannot carry."""

    key = "invalid_model"
    field = "model"


class InputRejectedError(ProviderError):
    """The server refused these texts (400): the provider itself is fine."""

    key = "input_rejected"
    provider_down = False
