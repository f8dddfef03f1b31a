"""A scripted Ollama server on 127.0.0.1: the part of Ollama's HTTP API Home Assistant's `ollama` integration uses.

`GET /api/tags` (set-up lists the models) and `POST /api/chat` with
`stream: true` (one JSON object per line, `done: true` last). It records
every chat request as sent, so a test reads the prompt the LLM really
received, and answers with scripted replies, or what `respond` makes of the
request (an AI Task's structured answer, say), or "OK.".

Plain aiohttp, no Home Assistant: the pytest tests (`tests/integration/
ollama_peer.py`) and the browser test (`tests/browser/panel_browser.py`,
against a Home Assistant in another process) both run it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
import json
from typing import Any

from aiohttp import web

MODEL = "llama3.2:latest"


class OllamaPeer:
    """Ollama's chat API on a local port, with scripted answers."""

    def __init__(self) -> None:
        """Answer "OK." until `replies` holds something else."""
        self.replies: deque[str] = deque()
        # Makes the reply to a request when no scripted one is left (None: "OK.").
        self.respond: Callable[[dict[str, Any]], str | None] | None = None
        self.requests: list[dict[str, Any]] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        """The base URL, as the `ollama` integration's `url` option takes it."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def system_prompts(self) -> list[str]:
        """The system prompt of every chat request, in order."""
        return [
            message["content"]
            for request in self.requests
            for message in request["messages"][:1]
            if message["role"] == "system"
        ]

    async def start(self) -> None:
        """Listen on a free port of 127.0.0.1."""
        app = web.Application()
        app.router.add_get("/api/tags", self._tags)
        app.router.add_post("/api/chat", self._chat)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _tags(self, _request: web.Request) -> web.Response:
        return web.json_response(
            {
                "models": [
                    {
                        "name": MODEL,
                        "model": MODEL,
                        "modified_at": "2026-11-01T00:00:00Z",
                        "size": 2019393189,
                        "digest": "a80c4f17acd5",
                        "details": {"format": "gguf", "family": "llama"},
                    }
                ]
            }
        )

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        reply = (
            self.replies.popleft()
            if self.replies
            else (self.respond(body) if self.respond else None) or "OK."
        )
        response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await response.prepare(request)
        now = datetime.now(UTC).isoformat()
        # The reply comes in two pieces, then the closing line, as Ollama streams.
        middle = len(reply) // 2
        for piece in (reply[:middle], reply[middle:]):
            await response.write(
                json.dumps(
                    {
                        "model": body["model"],
                        "created_at": now,
                        "message": {"role": "assistant", "content": piece},
                        "done": False,
                    }
                ).encode()
                + b"\n"
            )
        await response.write(
            json.dumps(
                {
                    "model": body["model"],
                    "created_at": now,
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": "stop",
                    "total_duration": 1000,
                    "prompt_eval_count": 10,
                    "eval_count": 2,
                }
            ).encode()
            + b"\n"
        )
        await response.write_eof()
        return response
