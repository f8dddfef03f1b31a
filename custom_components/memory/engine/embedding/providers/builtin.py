"""The built-in model as an embedding provider, run in an executor."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Executor
import functools
from typing import Any, Protocol

from .base import EmbeddingProvider, Matrix, ModelInfo
from .errors import CannotConnectError, ModelNotFoundError


class LocalEncoder(Protocol):
    """What the built-in model offers (`engine.encoder.BertEncoder`)."""

    def encode(self, texts: Sequence[str], *, query: bool = False) -> Matrix:
        """Embed texts (blocking); `query` for search questions."""

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

    async def _embed_batch(self, texts: list[str], *, query: bool) -> Any:
        loop = asyncio.get_running_loop()
        try:
            # Questions and memories differ for E5 ("query: " / "passage: ").
            return await loop.run_in_executor(
                self._executor,
                functools.partial(self._encoder.encode, texts, query=query),
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
