"""Embedding providers: texts in, vectors out, from a service the household runs.

Each provider speaks one wire protocol over the `aiohttp.ClientSession` it is
handed (Home Assistant passes its shared one), batches texts, bounds every
request with a timeout and turns every failure into a `ProviderError` with a
stable `key`, so that callers decide between "the provider is down" (trip the
breaker, keep the work) and "this text was refused" (count it against the
item). Nothing here logs or raises with an API key or a text in it. Every
text is sent with its codes, PINs, passwords and keys replaced by
"[redacted]" (`EmbeddingProvider.embed`, which every caller goes through).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
import json
import logging
import re
from typing import Any, ClassVar, Final, Protocol
import unicodedata
from urllib.parse import urlsplit

import aiohttp
import numpy as np
import numpy.typing as npt
from yarl import URL

from .secrets import redacted

_LOGGER = logging.getLogger(__name__)

type Matrix = npt.NDArray[np.float32]
# A user name and password for HTTP basic auth.
type Credentials = tuple[str, str]

# Seconds for one batch of documents, and for listing a server's models.
REQUEST_TIMEOUT: Final = 30.0
LIST_TIMEOUT: Final = 10.0
# Embedded to learn a model's dimension and to probe a provider that was down.
PROBE_TEXT: Final = "Assist Memory checks that embeddings work."
# Server error messages are cut to this many characters before they are kept.
_MESSAGE_CHARS: Final = 200

OLLAMA_DEFAULT_URL: Final = "http://localhost:11434"
OPENAI_DEFAULT_URL: Final = "https://api.openai.com/v1"
GEMINI_DEFAULT_URL: Final = "https://generativelanguage.googleapis.com/v1beta"

# What set-up accepts for a server (longer is a paste gone wrong, not a URL).
MAX_URL_CHARS: Final = 2048
MAX_API_KEY_CHARS: Final = 4096
MAX_MODEL_CHARS: Final = 256
# The longest vectors a model may make (the largest models make 4096; so
# does sqlite-vec's limit of 8192 leave room).
MAX_DIMENSIONS: Final = 8192
# Host names: at most 253 characters, labels of at most 63 (RFC 1035), in
# their ASCII form (IDNA); underscores for names such as Docker services.
_MAX_HOST_CHARS: Final = 253
_HOST_LABEL: Final = re.compile(r"[A-Za-z0-9_-]{1,63}")

# Name fragments of embedding models, to list them first where the server
# does not say which models embed.
_EMBEDDING_HINTS: Final = ("embed", "minilm", "bge", "e5", "gte", "mpnet", "arctic")


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


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """A model a server offers; `embedding` is None when the server does not say."""

    name: str
    embedding: bool | None = None


def looks_like_embedding_model(name: str) -> bool:
    """Guess from the name, for servers whose model list does not say."""
    lower = name.lower()
    return any(hint in lower for hint in _EMBEDDING_HINTS)


def sort_models(models: Sequence[ModelInfo]) -> list[ModelInfo]:
    """Embedding models first (known, then likely), then the rest, by name."""

    def rank(info: ModelInfo) -> tuple[int, str]:
        if info.embedding is True:
            return 0, info.name
        if info.embedding is None and looks_like_embedding_model(info.name):
            return 1, info.name
        return 2, info.name

    return sorted({info.name: info for info in models}.values(), key=rank)


class EmbeddingProvider(ABC):
    """Turns texts into float32 vectors, in batches of at most `max_batch`."""

    kind: ClassVar[str]
    max_batch: ClassVar[int] = 32

    def __init__(self, model: str) -> None:
        """Bind the provider to one model."""
        self.model = model

    def __repr__(self) -> str:
        """Never show credentials."""
        return f"<{type(self).__name__} model={self.model!r}>"

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> Matrix:
        """Vectors for `texts`, one row each, in order.

        `query` marks a search query rather than a document: providers with
        task types (Gemini) embed the two differently. Secret values in the
        texts are replaced by "[redacted]" before anything is sent.

        Raises:
            ProviderError: the request failed or the answer is unusable.

        """
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        # The one door to every provider: no secret goes through it.
        texts = [redacted(text) for text in texts]
        rows: list[Matrix] = []
        for start in range(0, len(texts), self.max_batch):
            chunk = list(texts[start : start + self.max_batch])
            raw = await self._embed_batch(chunk, query=query)
            rows.append(self._matrix(raw, len(chunk)))
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        if len({matrix.shape[1] for matrix in rows}) != 1:
            raise InvalidResponseError("batches came back with different dimensions")
        return rows[0] if len(rows) == 1 else np.vstack(rows)

    @staticmethod
    def _matrix(raw: Any, count: int) -> Matrix:
        try:
            matrix = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as err:
            raise InvalidResponseError("embeddings are not lists of numbers") from err
        if matrix.ndim != 2 or matrix.shape[0] != count or matrix.shape[1] == 0:
            raise InvalidResponseError(
                f"expected {count} embeddings, got shape {matrix.shape}"
            )
        if not np.all(np.isfinite(matrix)):
            raise InvalidResponseError("embeddings contain NaN or infinity")
        return matrix

    @abstractmethod
    async def _embed_batch(self, texts: list[str], *, query: bool) -> Any:
        """One request; return something shaped (len(texts), dim)."""

    @abstractmethod
    async def list_models(self) -> list[ModelInfo]:
        """Models the server offers, to choose from during set-up."""

    async def close(self) -> None:  # noqa: B027 - optional for subclasses
        """Release what the provider holds (the built-in model's weights)."""


async def probe_dimension(
    provider: EmbeddingProvider, models: Sequence[ModelInfo] = ()
) -> int:
    """Embed one text and return the model's dimension.

    A model the server lists but cannot embed with is reported as
    `NotEmbeddingModelError` rather than as unknown.
    """
    listed = {info.name: info for info in models}.get(provider.model)
    if listed is not None and listed.embedding is False:
        raise NotEmbeddingModelError(
            f"{provider.model} is not an embedding model", model=provider.model
        )
    try:
        matrix = await provider.embed([PROBE_TEXT])
    except ModelNotFoundError as err:
        if listed is not None:
            raise NotEmbeddingModelError(
                f"{provider.model} is not an embedding model", model=provider.model
            ) from err
        raise
    dimensions = int(matrix.shape[1])
    if dimensions > MAX_DIMENSIONS:
        raise DimensionsOutOfRangeError(
            f"{provider.model} makes {dimensions}-dimensional vectors"
        )
    return dimensions


def _error_text(body: bytes) -> str:
    """Extract the message of an error body (JSON or plain text), shortened."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return text.strip()[:_MESSAGE_CHARS]
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        error = error.get("message", error)
    return str(error).strip()[:_MESSAGE_CHARS]


def _printable(text: str) -> bool:
    """No control, format, private-use or unassigned characters."""
    return not any(
        unicodedata.category(char) in ("Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp")
        for char in text
    )


def _valid_host(host: str) -> bool:
    """Tell a host name (IDNA-encoded) or IP literal DNS could be asked for."""
    if ":" in host:  # an IPv6 literal, which yarl has checked
        return True
    labels = host.rstrip(".").split(".")
    return len(host) <= _MAX_HOST_CHARS and all(
        _HOST_LABEL.fullmatch(label) for label in labels
    )


def split_url(url: str) -> tuple[str, Credentials | None]:
    """Check a server's base URL; return it without credentials, and them apart.

    A `user:password@` in the URL (a reverse proxy with basic auth) becomes
    an `Authorization: Basic` header, so that no URL kept, shown or logged
    holds the password. The errors never repeat the URL.

    Raises:
        InvalidUrlError: not an http(s) URL of a reachable server.

    """
    text = url.strip()
    if (
        not text
        or len(text) > MAX_URL_CHARS
        or not _printable(text)
        or any(char.isspace() for char in text)
    ):
        raise InvalidUrlError("the URL is empty, too long or has spaces or controls")
    try:
        parsed = URL(text)
        # `host` decodes IDNA, which refuses a malformed `xn--` label.
        host = (parsed.raw_host or "") if parsed.host is not None else ""
        port = parsed.explicit_port
        credentials: Credentials | None = None
        if parsed.user is not None or parsed.password is not None:
            credentials = (parsed.user or "", parsed.password or "")
            # Refuses what basic auth cannot carry (a colon in the user name).
            aiohttp.encode_basic_auth(*credentials)
        plain = str(parsed.with_user(None)).rstrip("/")
    except ValueError, UnicodeError:
        raise InvalidUrlError("the URL cannot be read") from None
    if (
        parsed.scheme not in ("http", "https")
        or not _valid_host(host)
        or (port is not None and not 0 < port < 2**16)
        or parsed.raw_query_string
        or parsed.raw_fragment
        or text.endswith(("?", "#"))
    ):
        raise InvalidUrlError("not the http(s) URL of a server")
    return plain, credentials


def join_credentials(url: str, credentials: Credentials | None) -> str:
    """Put basic-auth credentials back into a URL, for the entry to keep."""
    if credentials is None:
        return url
    user, password = credentials
    return str(URL(url).with_user(user).with_password(password or None))


def check_api_key(key: str) -> str:
    """Return the key without surrounding spaces, if a header can carry it.

    Raises:
        InvalidApiKeyError: line breaks, NUL, spaces, non-ASCII, too long.

    """
    key = key.strip()
    if len(key) > MAX_API_KEY_CHARS or not all(
        char.isascii() and char.isprintable() and not char.isspace() for char in key
    ):
        raise InvalidApiKeyError("the API key cannot be sent in a header")
    return key


class HttpProvider(EmbeddingProvider):
    """Shared HTTP handling: timeouts, status codes, JSON, never the key."""

    default_url: ClassVar[str]
    # What a model name may hold: printable text, or fewer characters where
    # the name goes into the URL's path.
    model_pattern: ClassVar[re.Pattern[str]] = re.compile(r"[^\x00-\x1f\x7f]+")

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        model: str,
        url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """Bind a session, server and model; nothing is sent yet.

        A URL, key or model that no request can carry does not raise here:
        every request raises its `InvalidSettingError` instead, so that a
        loaded entry reports it like a provider that is down.
        """
        super().__init__(model)
        self._session = session
        self._timeout = timeout
        self._api_key = api_key or None
        self._credentials: Credentials | None = None
        self.invalid: InvalidSettingError | None = None
        self.url = ""
        try:
            plain, self._credentials = split_url(url or self.default_url)
            self.url = self.normalize_url(plain)
            if self._api_key is not None:
                self._api_key = check_api_key(self._api_key)
                if self._credentials is not None:
                    raise UrlCredentialsWithKeyError(
                        "a password in the URL and an API key cannot both be sent"
                    )
            self.check_model(self.model)
        except InvalidSettingError as err:
            self.invalid = err

    @property
    def entry_url(self) -> str:
        """The normalized URL with its credentials, as an entry keeps it."""
        return join_credentials(self.url, self._credentials)

    @classmethod
    def check_model(cls, model: str) -> None:
        """Refuse a model name the provider's API cannot carry.

        Raises:
            InvalidModelNameError: empty, too long, or characters it cannot hold.

        """
        if len(model) > MAX_MODEL_CHARS or not cls.model_pattern.fullmatch(model):
            raise InvalidModelNameError("the model name cannot be sent")

    def __repr__(self) -> str:
        """Never show credentials."""
        return f"<{type(self).__name__} url={self.url!r} model={self.model!r}>"

    @staticmethod
    def normalize_url(url: str) -> str:
        """Strip the base URL of spaces and a trailing slash."""
        return url.strip().rstrip("/")

    def _headers(self) -> dict[str, str]:
        if self._credentials is not None:
            return {"Authorization": aiohttp.encode_basic_auth(*self._credentials)}
        if self._api_key is None:
            return {}
        return {"Authorization": f"Bearer {self._api_key}"}

    async def _request(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        time_limit: float | None = None,
    ) -> Any:
        """Send one request; return the parsed JSON answer.

        Raises:
            ProviderError: a subclass for each way a request can fail.

        """
        if self.invalid is not None:
            raise self.invalid
        try:
            async with self._session.request(
                method,
                self.url + path,
                json=payload,
                headers=self._headers(),
                timeout=aiohttp.ClientTimeout(
                    total=time_limit or self._timeout or REQUEST_TIMEOUT
                ),
            ) as response:
                status = response.status
                body = await response.read()
        except TimeoutError as err:
            raise ProviderTimeoutError(
                f"{self.kind} did not answer in time", url=self.url
            ) from err
        except aiohttp.ClientError as err:
            raise CannotConnectError(
                f"cannot reach {self.kind} at {self.url}: {type(err).__name__}",
                url=self.url,
            ) from err
        if status >= 400:
            message = _error_text(body)
            _LOGGER.debug("%s answered %s: %s", self.kind, status, message)
            raise self._error(status, message)
        try:
            return json.loads(body)
        except ValueError as err:
            raise InvalidResponseError(
                f"{self.kind} answered with something that is not JSON"
            ) from err

    def _error(self, status: int, message: str) -> ProviderError:
        """Map an HTTP error to the kind of failure it means."""
        lower = message.lower()
        text = f"{self.kind} answered HTTP {status}"
        if status in (401, 403):
            return InvalidAuthError(f"{text}: the API key was refused")
        if status == 404:
            return ModelNotFoundError(f"{text}: {message}", model=self.model)
        if "support" in lower and "embed" in lower:
            return NotEmbeddingModelError(f"{text}: {message}", model=self.model)
        if "model" in lower and "not found" in lower:
            return ModelNotFoundError(f"{text}: {message}", model=self.model)
        if status in (408, 504):
            return ProviderTimeoutError(text, url=self.url)
        if status == 429 or status >= 500:
            return ServerError(f"{text}: {message}", status=str(status))
        if status in (400, 413, 422):
            return InputRejectedError(f"{text}: {message}", status=str(status))
        return InvalidResponseError(f"{text}: {message}")

    async def _named_models(self, path: str, field: str, key: str) -> list[ModelInfo]:
        """List the models `GET path` gives under `field`, each named by its `key`."""
        data = await self._request("GET", path, time_limit=LIST_TIMEOUT)
        items = self._field(data, field)
        if not isinstance(items, list):
            raise InvalidResponseError(f"'{field}' is not a list")
        return sort_models(
            [
                ModelInfo(str(item[key]))
                for item in items
                if isinstance(item, dict) and item.get(key)
            ]
        )

    @staticmethod
    def _field(data: Any, name: str) -> Any:
        if not isinstance(data, dict) or name not in data:
            raise InvalidResponseError(f"the answer has no {name!r}")
        return data[name]


class OllamaProvider(HttpProvider):
    """Ollama's `/api/embed` (batched) and `/api/tags`."""

    kind = "ollama"
    default_url = OLLAMA_DEFAULT_URL
    # `library/name:tag`, `hf.co/org/repo:Q4_K_M`, `name@sha256:...`.
    model_pattern = re.compile(r"[A-Za-z0-9._:/@+-]+")

    async def _embed_batch(self, texts: list[str], *, query: bool) -> Any:  # noqa: ARG002
        data = await self._request(
            "POST", "/api/embed", {"model": self.model, "input": texts}
        )
        return self._field(data, "embeddings")

    async def list_models(self) -> list[ModelInfo]:
        """Installed models; Ollama's list does not say which ones embed."""
        return await self._named_models("/api/tags", "models", "name")


class OpenAIProvider(HttpProvider):
    """The OpenAI embeddings API, as OpenAI, llama.cpp, LocalAI, vLLM and LM Studio serve it."""

    kind = "openai"
    default_url = OPENAI_DEFAULT_URL
    max_batch = 64

    @staticmethod
    def normalize_url(url: str) -> str:
        """`http://host:8080` means `http://host:8080/v1`, as every server mounts it."""
        url = url.strip().rstrip("/")
        if urlsplit(url).path in ("", "/"):
            url += "/v1"
        return url

    async def _embed_batch(self, texts: list[str], *, query: bool) -> Any:  # noqa: ARG002
        data = await self._request(
            "POST",
            "/embeddings",
            {"model": self.model, "input": texts, "encoding_format": "float"},
        )
        items = self._field(data, "data")
        if not isinstance(items, list) or not all(
            isinstance(item, dict) and "embedding" in item for item in items
        ):
            raise InvalidResponseError("'data' is not a list of embeddings")
        # The API gives each item its input index; keep input order.
        indexes = [item.get("index", 0) for item in items]
        if not all(type(index) is int for index in indexes):
            raise InvalidResponseError("an embedding's 'index' is not a number")
        ordered = sorted(zip(indexes, items, strict=True), key=lambda pair: pair[0])
        return [item["embedding"] for _index, item in ordered]

    async def list_models(self) -> list[ModelInfo]:
        """List `/models`, embedding-like names first (OpenAI lists chat models too)."""
        return await self._named_models("/models", "data", "id")


class GeminiProvider(HttpProvider):
    """Google Gemini's `embedContent` / `batchEmbedContents` and models list."""

    kind = "gemini"
    default_url = GEMINI_DEFAULT_URL
    max_batch = 100
    # The name is a segment of the request's path.
    model_pattern = re.compile(r"[A-Za-z0-9._:-]+")

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *,
        model: str,
        url: str | None = None,
        api_key: str | None = None,
        timeout: float | None = None,
    ) -> None:
        """Accept the model with or without its `models/` prefix."""
        super().__init__(
            session,
            model=model.removeprefix("models/"),
            url=url,
            api_key=api_key,
            timeout=timeout,
        )

    def _headers(self) -> dict[str, str]:
        # A header, not `?key=`: a URL ends up in error messages and logs.
        if self._api_key is None:
            return super()._headers()  # basic auth from the URL, if any
        return {"x-goog-api-key": self._api_key}

    def _error(self, status: int, message: str) -> ProviderError:
        # Gemini answers an invalid key with 400 INVALID_ARGUMENT.
        if status == 400 and "api key" in message.lower():
            return InvalidAuthError(f"gemini answered HTTP {status}: invalid API key")
        return super()._error(status, message)

    async def _embed_batch(self, texts: list[str], *, query: bool) -> Any:
        task = "RETRIEVAL_QUERY" if query else "RETRIEVAL_DOCUMENT"
        name = f"models/{self.model}"
        if len(texts) == 1:
            data = await self._request(
                "POST",
                f"/{name}:embedContent",
                {"content": {"parts": [{"text": texts[0]}]}, "taskType": task},
            )
            return [self._field(self._field(data, "embedding"), "values")]
        data = await self._request(
            "POST",
            f"/{name}:batchEmbedContents",
            {
                "requests": [
                    {
                        "model": name,
                        "content": {"parts": [{"text": text}]},
                        "taskType": task,
                    }
                    for text in texts
                ]
            },
        )
        embeddings = self._field(data, "embeddings")
        if not isinstance(embeddings, list):
            raise InvalidResponseError("'embeddings' is not a list")
        return [self._field(item, "values") for item in embeddings]

    async def list_models(self) -> list[ModelInfo]:
        """Models with the methods each supports (`embedContent` means it embeds)."""
        models: list[ModelInfo] = []
        token = ""
        for _page in range(10):
            path = "/models?pageSize=1000" + (f"&pageToken={token}" if token else "")
            data = await self._request("GET", path, time_limit=LIST_TIMEOUT)
            items = self._field(data, "models")
            if not isinstance(items, list):
                raise InvalidResponseError("'models' is not a list")
            for item in items:
                if isinstance(item, dict) and item.get("name"):
                    methods = item.get("supportedGenerationMethods") or []
                    models.append(
                        ModelInfo(
                            str(item["name"]).removeprefix("models/"),
                            "embedContent" in methods,
                        )
                    )
            token = str(data.get("nextPageToken") or "")
            if not token:
                break
        return sort_models(models)


class LocalEncoder(Protocol):
    """What the built-in model offers (`engine.encoder.BertEncoder`)."""

    def encode(self, texts: Sequence[str]) -> Matrix:
        """Embed texts (blocking)."""

    def close(self) -> None:
        """Drop the weights; the next `encode` loads them again."""


class LocalProvider(EmbeddingProvider):
    """The built-in model, run in an executor so the event loop never waits."""

    kind = "local"
    max_batch = 32

    def __init__(
        self,
        encoder: LocalEncoder,
        *,
        model: str,
        failure: type[Exception] | tuple[type[Exception], ...] = (),
        executor: Executor | None = None,
    ) -> None:
        """Wrap an encoder; `failure` is the error type its load raises."""
        super().__init__(model)
        self._encoder = encoder
        self._failure = failure
        self._executor = executor

    async def _embed_batch(self, texts: list[str], *, query: bool) -> Any:  # noqa: ARG002
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._executor, self._encoder.encode, texts
            )
        except self._failure as err:
            raise ModelNotFoundError(
                f"the built-in model cannot be used: {err}", model=self.model
            ) from err
        except OSError as err:
            raise CannotConnectError(
                f"the built-in model cannot be read: {err.strerror}", url=""
            ) from err

    async def list_models(self) -> list[ModelInfo]:
        """List the one model it holds."""
        return [ModelInfo(self.model, True)]

    async def close(self) -> None:
        """Drop the weights (read again lazily on the next text)."""
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._encoder.close)


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


def model_key(provider: str, model: str, dimensions: int) -> str:
    """Name the store files vectors under: provider, model and dimension.

    The dimension is part of it, so a model that changes its dimension under
    the same name gets a fresh set of vectors instead of an unusable mix.
    """
    return f"{provider}/{model}@{dimensions}"
