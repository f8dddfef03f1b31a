"""A scripted Ollama server on 127.0.0.1: the part of Ollama's HTTP API Home Assistant's `ollama` integration uses.

`GET /api/tags` (set-up lists the models) and `POST /api/chat` with
`stream: true` (one JSON object per line, `done: true` last). It records
every chat request as sent, so a test reads the prompt the LLM really
received, and answers with scripted replies, or what `respond` makes of the
request (an AI Task's structured answer, say), or "OK.". A scripted reply
may be a `ToolCall`: the model calls one of the tools the request offered
(named by its end, `memory__add`, whatever prefix Home Assistant gave it),
as a model with tools does; Home Assistant runs it and asks again with the
result.

Plain aiohttp, no Home Assistant: the pytest tests (`tests/integration/
ollama_peer.py`) and the browser test (`tests/browser/panel_browser.py`,
against a Home Assistant in another process) both run it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
import json
from typing import Any

from aiohttp import web

MODEL = "llama3.2:latest"


@dataclass(frozen=True)
class ToolCall:
    """A scripted reply that calls the offered tool whose name ends with `tool`."""

    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def message(self, request: dict[str, Any]) -> dict[str, Any]:
        """Return the assistant message calling it, by the name the request gave it."""
        offered = [tool["function"]["name"] for tool in request.get("tools") or ()]
        name = next(name for name in offered if name.endswith(self.tool))
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"function": {"name": name, "arguments": self.arguments}}],
        }


class OllamaPeer:
    """Ollama's chat API on a local port, with scripted answers."""

    def __init__(self) -> None:
        """Answer "OK." until `replies` holds something else."""
        self.replies: deque[str | ToolCall] = deque()
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
        # The reply comes in two pieces, then the closing line, as Ollama
        # streams; a tool call in one piece.
        if isinstance(reply, ToolCall):
            messages = [reply.message(body)]
        else:
            middle = len(reply) // 2
            messages = [
                {"role": "assistant", "content": piece}
                for piece in (reply[:middle], reply[middle:])
            ]
        for message in messages:
            await response.write(
                json.dumps(
                    {
                        "model": body["model"],
                        "created_at": now,
                        "message": message,
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
