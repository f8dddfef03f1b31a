"""The OpenAI embeddings API, as OpenAI and OpenAI-compatible servers speak it."""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit

from .base import ModelInfo
from .errors import InvalidResponseError
from .http import HttpProvider

OPENAI_DEFAULT_URL: Final = "https://api.openai.com/v1"


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
