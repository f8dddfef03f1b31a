"""The Google Gemini embedding provider (`batchEmbedContents`, task types)."""

from __future__ import annotations

import re
from typing import Any, Final

import aiohttp

from .base import ModelInfo, sort_models
from .errors import InvalidAuthError, InvalidResponseError, ProviderError
from .http import HttpProvider

GEMINI_DEFAULT_URL: Final = "https://generativelanguage.googleapis.com/v1beta"


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
            data = await self._list(path)
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
