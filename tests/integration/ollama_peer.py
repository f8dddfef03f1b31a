"""A scripted Ollama chat server, and Home Assistant's own `ollama` agent set up on it.

`OllamaPeer` is an aiohttp application on 127.0.0.1 that speaks the part of
Ollama's HTTP API Home Assistant's `ollama` integration uses: `GET /api/tags`
(set-up lists the models) and `POST /api/chat` with `stream: true` (one JSON
object per line, `done: true` last). It records every chat request as sent,
so a test reads the system prompt the agent's LLM really received, and
answers with scripted replies ("OK." when none is left).

`async_setup_ollama_agent` sets up the real `ollama` integration (config
entry and conversation subentry, as its config flow makes them) with the
Assist and Memory APIs selected; `say` runs one turn through it the way
Assist does.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
import json
from typing import Any

from aiohttp import web
from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

MODEL = "llama3.2:latest"


class OllamaPeer:
    """Ollama's chat API on a local port, with scripted answers."""

    def __init__(self) -> None:
        """Answer "OK." until `replies` holds something else."""
        self.replies: deque[str] = deque()
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
        reply = self.replies.popleft() if self.replies else "OK."
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


@dataclass
class OllamaAgent:
    """The `ollama` conversation entity set up on a peer."""

    entity_id: str
    entry: MockConfigEntry
    peer: OllamaPeer

    async def say(
        self,
        hass: HomeAssistant,
        text: str,
        *,
        context: Context | None = None,
        conversation_id: str | None = None,
        device_id: str | None = None,
        language: str | None = None,
    ) -> conversation.ConversationResult:
        """One turn, as Assist (or a voice satellite) runs it."""
        return await conversation.async_converse(
            hass,
            text,
            conversation_id,
            context or Context(),
            language=language,
            agent_id=self.entity_id,
            device_id=device_id,
        )

    @property
    def last_prompt(self) -> str:
        """The system prompt of the last chat request."""
        return self.peer.system_prompts[-1]


async def async_setup_ollama_agent(
    hass: HomeAssistant, peer: OllamaPeer
) -> OllamaAgent:
    """Set up Home Assistant's `ollama` integration on the peer, with Assist and Memory."""
    assert await async_setup_component(hass, "homeassistant", {})
    entry = MockConfigEntry(
        domain="ollama",
        title="Ollama",
        version=3,
        minor_version=3,
        data={"url": peer.url},
        subentries_data=[
            ConfigSubentryData(
                data={
                    "model": MODEL,
                    "prompt": "You are a household assistant.",
                    "llm_hass_api": ["assist", "memory"],
                    "max_history": 20,
                    "num_ctx": 8192,
                    "keep_alive": -1,
                    "think": False,
                },
                subentry_type="conversation",
                title="Ollama Conversation",
                unique_id=None,
            )
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    [registered] = [
        found
        for found in er.async_entries_for_config_entry(
            er.async_get(hass), entry.entry_id
        )
        if found.domain == "conversation"
    ]
    return OllamaAgent(entity_id=registered.entity_id, entry=entry, peer=peer)
