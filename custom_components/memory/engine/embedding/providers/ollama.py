"""The Ollama embedding provider (`/api/embed`, `/api/tags`)."""

from __future__ import annotations

import re
from typing import Any, Final

from .base import ModelInfo
from .http import HttpProvider

OLLAMA_DEFAULT_URL: Final = "http://localhost:11434"


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
