"""The embedding provider contract: texts in, float32 vectors out, in batches.

`EmbeddingProvider.embed` is the one door every caller goes through: it
replaces codes, PINs, passwords and keys in the texts by "[redacted]",
batches them and checks the answer's shape. Also the model list ordering,
the dimension probe and the key vectors are filed under.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

import numpy as np
import numpy.typing as npt

from ...privacy import redacted
from .errors import (
    DimensionsOutOfRangeError,
    InvalidResponseError,
    ModelNotFoundError,
    NotEmbeddingModelError,
)

type Matrix = npt.NDArray[np.float32]
# Embedded to learn a model's dimension and to probe a provider that was down.
PROBE_TEXT: Final = "Assist Memory checks that embeddings work."
# The longest vectors a model may make (the largest models make 4096; so
# does sqlite-vec's limit of 8192 leave room).
MAX_DIMENSIONS: Final = 8192
# Name fragments of embedding models, to list them first where the server
# does not say which models embed.
_EMBEDDING_HINTS: Final = ("embed", "minilm", "bge", "e5", "gte", "mpnet", "arctic")


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


def model_key(provider: str, model: str, dimensions: int) -> str:
    """Name the store files vectors under: provider, model and dimension.

    The dimension is part of it, so a model that changes its dimension under
    the same name gets a fresh set of vectors instead of an unusable mix.
    """
    return f"{provider}/{model}@{dimensions}"
