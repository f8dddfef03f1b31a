"""What every HTTP embedding provider shares: URL, key and model checks, requests.

Each provider speaks its wire protocol over the `aiohttp.ClientSession` it
is handed (Home Assistant passes its shared one), bounds every request with
a timeout and turns every status and malformed answer into a
`ProviderError`; nothing logged or raised carries the API key.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any, ClassVar, Final
import unicodedata

import aiohttp
from yarl import URL

from .base import EmbeddingProvider, ModelInfo, sort_models
from .errors import (
    CannotConnectError,
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

_LOGGER = logging.getLogger(__name__)

# A user name and password for HTTP basic auth.
type Credentials = tuple[str, str]

# Seconds for one batch of documents, and for listing a server's models.
REQUEST_TIMEOUT: Final = 30.0
LIST_TIMEOUT: Final = 10.0
# Server error messages are cut to this many characters before they are kept.
_MESSAGE_CHARS: Final = 200
# What set-up accepts for a server (longer is a paste gone wrong, not a URL).
MAX_URL_CHARS: Final = 2048
MAX_API_KEY_CHARS: Final = 4096
MAX_MODEL_CHARS: Final = 256
# Host names: at most 253 characters, labels of at most 63 (RFC 1035), in
# their ASCII form (IDNA); underscores for names such as Docker services.
_MAX_HOST_CHARS: Final = 253
_HOST_LABEL: Final = re.compile(r"[A-Za-z0-9_-]{1,63}")


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
        data = await self._list(path)
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

    async def _list(self, path: str) -> Any:
        """`GET path` within the time a model list may take."""
        return await self._request("GET", path, time_limit=LIST_TIMEOUT)

    @staticmethod
    def _field(data: Any, name: str) -> Any:
        if not isinstance(data, dict) or name not in data:
            raise InvalidResponseError(f"the answer has no {name!r}")
        return data[name]
