"""The model bench/digestion.py asks: Ollama, an OpenAI-compatible server, or Home Assistant.

Each client sends one digestion prompt and returns a `Reply`: the answer as
it came (the model's text, or the data an AI Task entity parsed), the tokens
the endpoint counted and the seconds the call took.

- `OllamaClient`: `POST /api/chat`, streamed as Home Assistant's `ollama`
  integration streams it, with the system prompt its AI Task entity sends
  and the answer's JSON schema as `format` (`--free`: none); tokens from
  `prompt_eval_count` and `eval_count`.
- `OpenAIClient`: `POST <base>/chat/completions` with `response_format`
  `json_schema` (`--free`: none); tokens from `usage`.
- `HomeAssistantClient`: `POST /api/services/ai_task/generate_data
  ?return_response` on a running Home Assistant (a long-lived access
  token), the structure given as selectors, which is how the action takes
  one; no tokens (the action does not report them).
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import time
from typing import Any, Final, Protocol

import aiohttp

# What Home Assistant's AI Task puts before the instructions (ai_task.const
# DEFAULT_SYSTEM_PROMPT and the date line of its chat log).
SYSTEM_PROMPT: Final = (
    "You are a Home Assistant expert and help users with their tasks.\n"
    "Today's date is {date}.\n"
)
TIMEOUT: Final = aiohttp.ClientTimeout(total=600)


@dataclass(frozen=True, slots=True)
class Reply:
    """One answer: as it came, its tokens (None: not reported), its seconds."""

    answer: Any
    prompt_tokens: int | None
    output_tokens: int | None
    seconds: float


class Client(Protocol):
    """Asks one digestion question."""

    async def ask(self, prompt: str, *, date: str) -> Reply:
        """Send the prompt (the conversation took place on `date`)."""


def _messages(prompt: str, date: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SYSTEM_PROMPT.format(date=date)},
        {"role": "user", "content": prompt},
    ]


class OllamaClient:
    """Ollama's chat API, asked as Home Assistant's `ollama` AI Task asks it."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        url: str,
        model: str,
        *,
        schema: dict[str, Any] | None,
        num_ctx: int = 8192,
    ) -> None:
        """Send `schema` (the answer's JSON schema) as `format`; None: none."""
        self._session = session
        self._url = url.rstrip("/")
        self._model = model
        self._schema = schema
        self._num_ctx = num_ctx

    async def ask(self, prompt: str, *, date: str) -> Reply:
        """Stream one chat; the text is the pieces joined."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": _messages(prompt, date),
            "stream": True,
            "options": {"num_ctx": self._num_ctx},
        }
        if self._schema is not None:
            body["format"] = self._schema
        started = time.perf_counter()
        pieces: list[str] = []
        last: dict[str, Any] = {}
        async with self._session.post(
            f"{self._url}/api/chat", json=body, timeout=TIMEOUT
        ) as response:
            response.raise_for_status()
            async for line in response.content:
                if line.strip():
                    last = json.loads(line)
                    pieces.append(last.get("message", {}).get("content", ""))
        return Reply(
            "".join(pieces),
            last.get("prompt_eval_count"),
            last.get("eval_count"),
            time.perf_counter() - started,
        )


class OpenAIClient:
    """An OpenAI-compatible chat completions endpoint (llama.cpp, vLLM, LM Studio, OpenAI)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        base_url: str,
        model: str,
        *,
        schema: dict[str, Any] | None,
        api_key: str = "",
    ) -> None:
        """`base_url` ends before `/chat/completions` (".../v1")."""
        self._session = session
        self._url = base_url.rstrip("/")
        self._model = model
        self._schema = schema
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}

    async def ask(self, prompt: str, *, date: str) -> Reply:
        """One completion, not streamed."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": _messages(prompt, date),
        }
        if self._schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "memories", "schema": self._schema},
            }
        started = time.perf_counter()
        async with self._session.post(
            f"{self._url}/chat/completions",
            json=body,
            headers=self._headers,
            timeout=TIMEOUT,
        ) as response:
            response.raise_for_status()
            data = await response.json()
        usage = data.get("usage") or {}
        return Reply(
            data["choices"][0]["message"].get("content") or "",
            usage.get("prompt_tokens"),
            usage.get("completion_tokens"),
            time.perf_counter() - started,
        )


def selector_structure(memory_types: tuple[str, ...]) -> dict[str, Any]:
    """Describe the extraction answer as `ai_task.generate_data` takes a structure."""

    def field(selector: dict[str, Any], *, required: bool = True) -> dict[str, Any]:
        return {"required": required, "selector": selector}

    memory = {
        "content": field({"text": {}}),
        "type": field({"select": {"options": list(memory_types)}}),
        "about": field({"text": {}}),
        "confidence": field({"number": {"min": 0, "max": 1, "step": 0.01}}),
        "message_id": field({"number": {"mode": "box"}}, required=False),
        "topic": field({"text": {}}, required=False),
        "replaces": field({"text": {"multiple": True}}, required=False),
    }
    return {
        "memories": field({"object": {"multiple": True, "fields": memory}}),
        "summary": field({"text": {}}),
    }


class HomeAssistantClient:
    """Any AI Task entity of a running Home Assistant, through its REST API."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        url: str,
        token: str,
        *,
        structure: dict[str, Any],
        task_name: str,
        entity_id: str | None = None,
    ) -> None:
        """No `entity_id`: Home Assistant's preferred AI Task entity."""
        self._session = session
        self._url = url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}"}
        self._structure = structure
        self._task_name = task_name
        self._entity_id = entity_id

    async def ask(self, prompt: str, *, date: str) -> Reply:  # noqa: ARG002 - HA adds its own date
        """Call `ai_task.generate_data` and return the data it gave."""
        body: dict[str, Any] = {
            "task_name": self._task_name,
            "instructions": prompt,
            "structure": self._structure,
        }
        if self._entity_id:
            body["entity_id"] = self._entity_id
        started = time.perf_counter()
        async with self._session.post(
            f"{self._url}/api/services/ai_task/generate_data?return_response",
            json=body,
            headers=self._headers,
            timeout=TIMEOUT,
        ) as response:
            response.raise_for_status()
            data = await response.json()
        return Reply(
            data["service_response"]["data"], None, None, time.perf_counter() - started
        )
