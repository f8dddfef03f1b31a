"""A local embedding server that speaks Ollama's, OpenAI's and Gemini's APIs.

One aiohttp application on 127.0.0.1 answers all three wire protocols with
deterministic vectors in which related words ("allergic"/"allergy",
"nuts"/"peanuts", ...) share dimensions, so semantic search finds what keyword
search cannot. Switches make it fail the ways real servers do: refuse the key,
answer slowly, send malformed JSON or vectors of another length, stop
listening. Every request is counted, so tests can prove a cache hit made none.
The texts of the embedding worker's reading measure (the engine's own
question and memory pairs, `vectors.reading`) are kept apart (`probed`,
and its requests in `calls` as `<endpoint>.reading`): `texts`, `received`,
`embedded` and the other `calls` are the household's.
"""

from __future__ import annotations

import asyncio
from collections import Counter
import hashlib
import re
from typing import Any

from aiohttp import web
import numpy as np

from custom_components.memory.engine.languages import PARAPHRASES

# Words that mean the same thing get the same feature.
CONCEPTS = {
    "allergic": "allergy",
    "allergy": "allergy",
    "allergies": "allergy",
    "nut": "nut",
    "nuts": "nut",
    "peanuts": "nut",
    "peanut": "nut",
    "heating": "heat",
    "radiator": "heat",
    "warm": "heat",
    "bins": "trash",
    "garbage": "trash",
    "rubbish": "trash",
    "trash": "trash",
}
STOP_WORDS = {"is", "to", "the", "a", "what", "on", "go", "out", "does", "which"}

# Every text the reading measure sends, in every language.
READING_TEXTS = frozenset(
    text for pairs in PARAPHRASES.values() for pair in pairs for text in pair
)

EMBEDDING_MODELS = {"embed-small": 32, "nomic-embed-text:latest": 32}
CHAT_MODELS = ("llama3.2:latest",)


def fake_vector(text: str, dim: int) -> list[float]:
    """Embed a text as a unit vector: one signed feature per concept or word."""
    vector = np.zeros(dim, dtype=np.float64)
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        if word in STOP_WORDS:
            continue
        digest = hashlib.sha256(CONCEPTS.get(word, word).encode()).digest()
        vector[digest[0] % dim] += 1.0 if digest[1] % 2 else -1.0
    vector[dim - 1] += 0.1  # never all zero
    return [float(x) for x in vector / np.linalg.norm(vector)]


def _strings(value: Any) -> list[str]:
    """Every string in a JSON value, depth first."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


class FakeEmbeddingServer:
    """The three protocols on one port; change attributes to make it misbehave."""

    def __init__(self, *, api_key: str | None = None) -> None:
        """Serve the embedding models in `EMBEDDING_MODELS` and one chat model."""
        self.api_key = api_key
        self.models: dict[str, int] = dict(EMBEDDING_MODELS)
        self.chat_models: tuple[str, ...] = CHAT_MODELS
        # Failure switches.
        self.status: int | None = None  # answer every request with this status
        self.error_text: str | None = None  # ...and this plain-text body
        self.delay = 0.0  # seconds before answering any request
        self.malformed = False  # embedding answers are not JSON
        self.dimension: int | None = None  # override every model's dimension
        self.chat_status = 400  # what embedding with a chat model answers
        self.list_status: int | None = None  # answer model lists with this
        self.answer: Any = None  # send this JSON for every embedding request
        self.list_answer: Any = None  # and this for every model list
        self.reject: str | None = (
            None  # refuse (400) requests with a text containing this
        )
        # What happened.
        self.calls: Counter[str] = Counter()
        self.texts: list[int] = []  # how many texts each embedding call had
        self.received: list[str] = []  # every text embedded, as it arrived
        self.probed: list[str] = []  # the reading measure's texts, apart
        self.headers: list[dict[str, str]] = []
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._site: web.TCPSite | None = None

    @property
    def url(self) -> str:
        """Base URL (Ollama's layout; OpenAI's is under /v1, Gemini's /v1beta)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def embedded(self) -> int:
        """Texts embedded so far, over all calls (the reading measure's apart)."""
        return sum(self.texts)

    async def start(self) -> None:
        """Listen (again, on the same port after `stop`)."""
        app = web.Application()
        app.router.add_post("/api/embed", self._ollama_embed)
        app.router.add_get("/api/tags", self._ollama_tags)
        app.router.add_post("/v1/embeddings", self._openai_embed)
        app.router.add_get("/v1/models", self._openai_models)
        app.router.add_post("/v1beta/models/{call}", self._gemini_embed)
        app.router.add_get("/v1beta/models", self._gemini_models)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        self._site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await self._site.start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        """Stop listening: connections are refused until `start`."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = self._site = None

    # -- shared behaviour -----------------------------------------------------

    def _dim(self, model: str) -> int:
        return self.dimension or self.models[model]

    async def _gate(
        self, request: web.Request, name: str, *, embedding: bool
    ) -> web.Response | None:
        """Count the call and apply the failure switches.

        A request of the reading measure (its texts are the engine's pairs)
        counts as `<name>.reading`, apart from the household's.
        """
        if embedding and request.can_read_body:
            body = await request.json()
            if any(text in READING_TEXTS for text in _strings(body)):
                name = f"{name}.reading"
        self.calls[name] += 1
        self.headers.append(dict(request.headers))
        if self.delay:
            await asyncio.sleep(self.delay)
        status = self.status if embedding else (self.list_status or self.status)
        if status is not None and self.error_text is not None:
            return web.Response(text=self.error_text, status=status)
        if status is not None:
            return web.json_response({"error": f"failing with {status}"}, status=status)
        answer = self.answer if embedding else self.list_answer
        if answer is not None:
            return web.json_response(answer)
        return None

    def _refused(self, texts: list[str]) -> bool:
        return self.reject is not None and any(self.reject in t for t in texts)

    def _vectors(self, model: str, texts: list[str]) -> list[list[float]]:
        ours = [text for text in texts if text not in READING_TEXTS]
        if ours:
            self.texts.append(len(ours))
            self.received.extend(ours)
        self.probed.extend(text for text in texts if text in READING_TEXTS)
        return [fake_vector(text, self._dim(model)) for text in texts]

    def _bearer_ok(self, request: web.Request) -> bool:
        return self.api_key is None or (
            request.headers.get("Authorization") == f"Bearer {self.api_key}"
        )

    # -- Ollama ---------------------------------------------------------------

    async def _ollama_embed(self, request: web.Request) -> web.StreamResponse:
        if (
            failure := await self._gate(request, "ollama.embed", embedding=True)
        ) is not None:
            return failure
        if not self._bearer_ok(request):
            return web.json_response({"error": "unauthorized"}, status=401)
        body = await request.json()
        model = body["model"]
        if model in self.chat_models:
            return web.json_response(
                {"error": f'"{model}" does not support embeddings'},
                status=self.chat_status,
            )
        if model not in self.models:
            return web.json_response(
                {"error": f'model "{model}" not found, try pulling it first'},
                status=404,
            )
        if self.malformed:
            return web.Response(
                text='{"embeddings": [[0.1, ', content_type="application/json"
            )
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if self._refused(texts):
            return web.json_response({"error": "input rejected"}, status=400)
        return web.json_response(
            {"model": model, "embeddings": self._vectors(model, texts)}
        )

    async def _ollama_tags(self, request: web.Request) -> web.StreamResponse:
        if (
            failure := await self._gate(request, "ollama.tags", embedding=False)
        ) is not None:
            return failure
        if not self._bearer_ok(request):
            return web.json_response({"error": "unauthorized"}, status=401)
        names = [*self.models, *self.chat_models]
        return web.json_response(
            {"models": [{"name": name, "model": name, "size": 1} for name in names]}
        )

    # -- OpenAI ---------------------------------------------------------------

    @staticmethod
    def _openai_error(status: int, message: str, code: str | None) -> web.Response:
        return web.json_response(
            {
                "error": {
                    "message": message,
                    "type": "invalid_request_error",
                    "code": code,
                }
            },
            status=status,
        )

    async def _openai_embed(self, request: web.Request) -> web.StreamResponse:
        if (
            failure := await self._gate(request, "openai.embeddings", embedding=True)
        ) is not None:
            return failure
        if not self._bearer_ok(request):
            return self._openai_error(
                401, "Incorrect API key provided.", "invalid_api_key"
            )
        body = await request.json()
        model = body["model"]
        if model in self.chat_models:
            return self._openai_error(
                self.chat_status, f"{model} does not support embeddings", None
            )
        if model not in self.models:
            return self._openai_error(
                404, f"The model `{model}` does not exist", "model_not_found"
            )
        if self.malformed:
            return web.Response(
                text="<html>502 Bad Gateway</html>", content_type="text/html"
            )
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if self._refused(texts):
            return self._openai_error(400, "input is too long", None)
        vectors = self._vectors(model, texts)
        # Real servers may answer out of order; the index says where each goes.
        data = [
            {"object": "embedding", "index": i, "embedding": vector}
            for i, vector in enumerate(vectors)
        ]
        return web.json_response(
            {"object": "list", "model": model, "data": data[::-1], "usage": {}}
        )

    async def _openai_models(self, request: web.Request) -> web.StreamResponse:
        if (
            failure := await self._gate(request, "openai.models", embedding=False)
        ) is not None:
            return failure
        if not self._bearer_ok(request):
            return self._openai_error(
                401, "Incorrect API key provided.", "invalid_api_key"
            )
        names = [*self.models, *self.chat_models]
        return web.json_response(
            {"object": "list", "data": [{"id": n, "object": "model"} for n in names]}
        )

    # -- Gemini ---------------------------------------------------------------

    @staticmethod
    def _gemini_error(status: int, message: str, state: str) -> web.Response:
        return web.json_response(
            {"error": {"code": status, "message": message, "status": state}},
            status=status,
        )

    def _gemini_key_ok(self, request: web.Request) -> bool:
        return (
            self.api_key is None
            or request.headers.get("x-goog-api-key") == self.api_key
        )

    async def _gemini_embed(self, request: web.Request) -> web.StreamResponse:
        model, _, method = request.match_info["call"].rpartition(":")
        name = f"gemini.{method}"
        if (failure := await self._gate(request, name, embedding=True)) is not None:
            return failure
        if not self._gemini_key_ok(request):
            return self._gemini_error(
                400,
                "API key not valid. Please pass a valid API key.",
                "INVALID_ARGUMENT",
            )
        if model not in self.models or method not in (
            "embedContent",
            "batchEmbedContents",
        ):
            return self._gemini_error(
                404,
                f"models/{model} is not found for API version v1beta, or is not "
                "supported for embedContent.",
                "NOT_FOUND",
            )
        if self.malformed:
            return web.json_response({"embedding": {"vals": []}})
        body = await request.json()
        if method == "embedContent":
            texts = [body["content"]["parts"][0]["text"]]
        else:
            texts = [item["content"]["parts"][0]["text"] for item in body["requests"]]
        if self._refused(texts):
            return self._gemini_error(
                400, "Request contains an invalid argument.", "INVALID_ARGUMENT"
            )
        if method == "embedContent":
            return web.json_response(
                {"embedding": {"values": self._vectors(model, texts)[0]}}
            )
        return web.json_response(
            {"embeddings": [{"values": v} for v in self._vectors(model, texts)]}
        )

    async def _gemini_models(self, request: web.Request) -> web.StreamResponse:
        if (
            failure := await self._gate(request, "gemini.models", embedding=False)
        ) is not None:
            return failure
        if not self._gemini_key_ok(request):
            return self._gemini_error(
                400,
                "API key not valid. Please pass a valid API key.",
                "INVALID_ARGUMENT",
            )
        # Two pages, as the real list is paginated.
        if request.query.get("pageToken") == "page2":
            models: list[dict[str, Any]] = [
                {
                    "name": f"models/{name}",
                    "supportedGenerationMethods": ["generateContent"],
                }
                for name in self.chat_models
            ]
            return web.json_response({"models": models})
        models = [
            {
                "name": f"models/{name}",
                "supportedGenerationMethods": ["embedContent", "batchEmbedContents"],
            }
            for name in self.models
        ]
        return web.json_response({"models": models, "nextPageToken": "page2"})
