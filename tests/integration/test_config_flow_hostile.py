"""Hostile values in every field of the set-up, reconfigure, reauth and options flows.

Every answer is a form that names the field (or the whole form) with a
translated error, the schema's own refusal (`InvalidData`, which the UI shows
on the field with HTTP 400), the next step, or a saved entry: never an
exception, which the UI shows as HTTP 500. Keys and passwords that were typed
never reach the log at INFO or above, nor a text the form shows.

The servers are the local ones of `tests/provider_servers.py`.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
import json
import logging
from pathlib import Path
from typing import Any
from unittest.mock import patch

import aiohttp
from homeassistant.config_entries import ConfigFlowResult
from homeassistant.const import CONF_API_KEY, CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, InvalidData
from hypothesis import HealthCheck, event, given, settings, strategies as st
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
import pytest_socket

import custom_components.memory
from custom_components.memory import embedding
from custom_components.memory.const import (
    CONF_AI_TASK_MAX_CALLS_PER_HOUR,
    CONF_CONVERSATION_RETENTION_DAYS,
    CONF_DIGEST_IDLE_MINUTES,
    CONF_DIGEST_MIN_USER_WORDS,
    CONF_MIN_SCORE,
    CONF_MODEL,
    CONF_MODEL_FOLDER,
    CONF_RECALL_BUDGET,
    CONF_RECALL_MIN_SCORE,
    CONF_SEARCH_LIMIT,
    DOMAIN,
)
from custom_components.memory.engine.embedding.providers import http as provider_http
from custom_components.memory.options_flow import DIGESTION_SECTION
from tests.provider_servers import FakeEmbeddingServer

from . import start_reconfigure
from .test_config_flow_providers import _choose, _placeholders, _suggested, _url
from .test_providers import provider_entry

TRANSLATIONS = json.loads(
    (
        Path(custom_components.memory.__file__).parent / "translations" / "en.json"
    ).read_text(encoding="utf-8")
)
CONFIG_ERRORS = set(TRANSLATIONS["config"]["error"])
OPTIONS_ERRORS = set(TRANSLATIONS["options"]["error"])
SERVERS = ["ollama", "openai", "gemini"]
PASSWORD = "pw-7Zq-not-for-logs"
SECRET = "sk-hostile-secret-key"

# URLs no provider can be reached at: refused before anything is sent.
INVALID_URLS = [
    "http://exa mple.com:11434",
    "localhost:11434",
    "127.0.0.1:11434",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "ftp://127.0.0.1/",
    "http://",
    "http://127.0.0.1:0",
    "http://127.0.0.1:70000",
    "http://127.0.0.1:port",
    "http://::1:11434",
    "http://[::1",
    "http://127.0.0.1\x00.evil:11434",
    "http://127.0.0.1:11434/\r\nX-Injected: 1",
    "http://" + "a" * 100_000,
    "http://" + "é" * 70 + ".de",
    "http://xn--zz",
    "http://127.0.0.1:11434/?q=1",
    "http://127.0.0.1:11434/#fragment",
]
INVALID_MODELS = ["", "   ", "m" * 10_000, "bad\x00name", "line\nbreak"]
INVALID_KEYS = ["sk\r\nX-Injected: 1", "sk\x00nul", "ключ-ключ", "k" * 100_000]


def _ids(values: list[Any]) -> list[str]:
    """Short, distinct test ids for long or unprintable values."""
    return [f"{i}:{ascii(value)[:24]}" for i, value in enumerate(values)]


def _configure_errors(result: ConfigFlowResult | None) -> dict[str, str]:
    """Check one answer is a legitimate flow outcome; return its form errors."""
    if result is None:  # the schema refused the values (HTTP 400, on the field)
        return {}
    assert result["type"] in (
        FlowResultType.FORM,
        FlowResultType.CREATE_ENTRY,
        FlowResultType.ABORT,
    )
    errors = dict(result.get("errors") or {})
    assert set(errors.values()) <= CONFIG_ERRORS | OPTIONS_ERRORS, errors
    # The flows' last resort for a bug; no value typed may reach it.
    assert "unknown" not in errors.values()
    return errors


async def _submit(
    hass: HomeAssistant, flow_id: str, data: dict[str, Any], *, options: bool = False
) -> ConfigFlowResult | None:
    """Submit a form as the UI does; None when the schema refuses the values."""
    manager = hass.config_entries.options if options else hass.config_entries.flow
    try:
        return await manager.async_configure(flow_id, data)
    except InvalidData:
        return None


def _logged(caplog: pytest.LogCaptureFixture) -> Iterator[str]:
    """Everything logged at INFO or above, with tracebacks."""
    for record in caplog.records:
        if record.levelno >= logging.INFO:
            yield record.getMessage()
            if record.exc_text:
                yield record.exc_text


def _assert_secret_kept(caplog: pytest.LogCaptureFixture, *secrets: str) -> None:
    for text in _logged(caplog):
        for secret in secrets:
            assert secret not in text


@pytest.mark.parametrize("provider", SERVERS)
async def test_url_credentials_and_a_key(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    caplog: pytest.LogCaptureFixture,
    provider: str,
) -> None:
    """A password in the URL beside an API key: a field error, not HTTP 500."""
    caplog.set_level(logging.INFO)
    url = _url(embedding_server, provider).replace("://", f"://user:{PASSWORD}@")
    result = await _choose(hass, provider)

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: url, CONF_API_KEY: SECRET}
    )

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {CONF_URL: "url_credentials_with_key"}
    assert not embedding_server.calls
    _assert_secret_kept(caplog, PASSWORD, SECRET)


async def test_url_credentials_are_basic_auth(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Ollama behind a proxy with basic auth: `user:password@` in the URL works.

    The credentials go in an Authorization header, never in a text the form
    shows or the log; the entry keeps them, and reconfiguring with the URL it
    suggests (without them) keeps them too.
    """
    caplog.set_level(logging.INFO)
    basic = "Basic " + base64.b64encode(f"proxy:{PASSWORD}".encode()).decode()
    typed = embedding_server.url.replace("://", f"://proxy:{PASSWORD}@") + "/"
    result = await _choose(hass, "ollama")

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: typed}
    )
    assert result["step_id"] == "model"
    assert _placeholders(result) == {"url": embedding_server.url}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "embed-small"}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    entry = result["result"]
    assert entry.data[CONF_URL] == typed.rstrip("/")
    assert {h.get("Authorization") for h in embedding_server.headers} == {basic}
    assert embedding_server.calls["ollama.tags"] == 1

    result = await start_reconfigure(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "ollama"}
    )
    assert _suggested(result, CONF_URL) == embedding_server.url
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: embedding_server.url}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "nomic-embed-text:latest"}
    )
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done()
    assert entry.data[CONF_URL] == typed.rstrip("/")
    assert {h.get("Authorization") for h in embedding_server.headers} == {basic}

    # A key typed with the same URL replaces the password.
    result = await start_reconfigure(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "ollama"}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: embedding_server.url, CONF_API_KEY: SECRET}
    )
    assert result["step_id"] == "model"
    assert embedding_server.headers[-1]["Authorization"] == f"Bearer {SECRET}"
    _assert_secret_kept(caplog, PASSWORD, SECRET)


async def test_a_library_failure_is_a_form_error(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An exception nothing names (an aiohttp bug, say) is 'unknown' on each form.

    Its message, which may repeat the URL with its password, is not logged
    above DEBUG.
    """
    caplog.set_level(logging.INFO)
    failure = RuntimeError(f"http://u:{PASSWORD}@h went wrong")
    result = await _choose(hass, "ollama")
    flow_id = result["flow_id"]
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: embedding_server.url}
    )
    assert result["step_id"] == "model"
    gemini = await _choose(hass, "gemini")
    entry = provider_entry(embedding_server, "openai", api_key="sk-old")
    entry.add_to_hass(hass)
    reauth = await entry.start_reauth_flow(hass)

    with patch.object(aiohttp.ClientSession, "request", side_effect=failure):
        answers = [
            await hass.config_entries.flow.async_configure(
                flow_id, {CONF_MODEL: "embed-small"}
            ),
            await hass.config_entries.flow.async_configure(
                reauth["flow_id"], {CONF_API_KEY: SECRET}
            ),
        ]
        answers.append(
            await hass.config_entries.flow.async_configure(
                gemini["flow_id"], {CONF_URL: _url(embedding_server, "gemini")}
            )
        )

    assert [answer["errors"] for answer in answers] == [{"base": "unknown"}] * 3
    assert "unknown" in CONFIG_ERRORS
    assert "RuntimeError" in caplog.text
    _assert_secret_kept(caplog, PASSWORD, SECRET)


@pytest.mark.parametrize("provider", SERVERS)
@pytest.mark.parametrize("url", INVALID_URLS, ids=_ids(INVALID_URLS))
async def test_invalid_urls(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    caplog: pytest.LogCaptureFixture,
    provider: str,
    url: str,
) -> None:
    """A URL no server can be reached at is refused on the field, before sending."""
    caplog.set_level(logging.INFO)
    result = await _choose(hass, provider)

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: url}
    )

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {CONF_URL: "invalid_url"}
    assert not embedding_server.calls
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_reconfigure_refuses_the_same(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Reconfigure's server and model steps refuse what set-up refuses; nothing changes."""
    caplog.set_level(logging.INFO)
    entry = provider_entry(embedding_server, "openai", api_key="sk-old")
    entry.add_to_hass(hass)
    data = dict(entry.data)
    result = await start_reconfigure(hass, entry)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "openai"}
    )
    flow_id = result["flow_id"]
    with_password = _url(embedding_server, "openai").replace("://", f"://u:{PASSWORD}@")

    for typed, errors in (
        *(({CONF_URL: url}, {CONF_URL: "invalid_url"}) for url in INVALID_URLS),
        *(
            ({CONF_URL: _url(embedding_server, "openai"), CONF_API_KEY: key}, {})
            for key in INVALID_KEYS
        ),
        (
            {CONF_URL: with_password, CONF_API_KEY: SECRET},
            {CONF_URL: "url_credentials_with_key"},
        ),
    ):
        result = await hass.config_entries.flow.async_configure(flow_id, typed)
        assert result["errors"] == (errors or {CONF_API_KEY: "invalid_api_key"})
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_URL: _url(embedding_server, "openai")}
    )
    for model in INVALID_MODELS:
        result = await hass.config_entries.flow.async_configure(
            flow_id, {CONF_MODEL: model}
        )
        assert result["errors"] == {CONF_MODEL: "invalid_model"}

    assert entry.data == data
    _assert_secret_kept(caplog, PASSWORD, SECRET)


@pytest.mark.parametrize(
    ("url", "error"),
    [
        ("http://[::1]:1", "cannot_connect"),
        ("http://127.0.0.1:1", "cannot_connect"),
        ("HTTP://127.0.0.1:{port}", None),
        ("  http://127.0.0.1:{port}//  ", None),
    ],
)
async def test_urls_that_can_be_tried(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    url: str,
    error: str | None,
) -> None:
    """An IPv6 literal, an upper-case scheme or stray spaces are tried as typed."""
    # The test harness lets sockets reach 127.0.0.1 only; ::1 refuses port 1.
    pytest_socket.socket_allow_hosts(["127.0.0.1", "::1"])
    result = await _choose(hass, "ollama")

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: url.format(port=embedding_server.port)}
    )

    assert result["type"] is FlowResultType.FORM
    if error is None:
        assert result["step_id"] == "model"
        assert _placeholders(result) == {"url": embedding_server.url}
    else:
        assert result["errors"] == {"base": error}


@pytest.mark.parametrize("provider", SERVERS)
@pytest.mark.parametrize("key", INVALID_KEYS, ids=_ids(INVALID_KEYS))
async def test_invalid_keys(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    caplog: pytest.LogCaptureFixture,
    provider: str,
    key: str,
) -> None:
    """A key no server could be sent (line breaks, NUL, non-ASCII, 100 kB) is refused."""
    caplog.set_level(logging.INFO)
    result = await _choose(hass, provider)

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_URL: _url(embedding_server, provider), CONF_API_KEY: key},
    )

    assert result["errors"] == {CONF_API_KEY: "invalid_api_key"}
    assert not embedding_server.calls
    _assert_secret_kept(caplog, key.strip())


@pytest.mark.parametrize("key", INVALID_KEYS, ids=_ids(INVALID_KEYS))
async def test_reauth_invalid_keys(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer, key: str
) -> None:
    """Reauthentication refuses the same keys on the field."""
    entry = provider_entry(embedding_server, "openai", api_key="sk-old")
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: key}
    )

    assert result["errors"] == {CONF_API_KEY: "invalid_api_key"}
    assert entry.data[CONF_API_KEY] == "sk-old"


async def test_reauth_of_a_url_with_a_password(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer
) -> None:
    """A key beside a password in the entry's URL is refused on the whole form."""
    entry = provider_entry(embedding_server, "openai")
    url = entry.data[CONF_URL].replace("://", f"://u:{PASSWORD}@")
    entry = MockConfigEntry(domain=DOMAIN, data={**entry.data, CONF_URL: url})
    entry.add_to_hass(hass)
    result = await entry.start_reauth_flow(hass)
    assert PASSWORD not in str(_placeholders(result))

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_API_KEY: SECRET}
    )

    assert result["errors"] == {"base": "url_credentials_with_key"}
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["reason"] == "reauth_successful"
    assert embedding_server.headers[-1]["Authorization"].startswith("Basic ")


@pytest.mark.parametrize("provider", SERVERS)
@pytest.mark.parametrize("model", INVALID_MODELS, ids=_ids(INVALID_MODELS))
async def test_invalid_model_names(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    provider: str,
    model: str,
) -> None:
    """Empty, 10 kB, NUL or line-broken model names are refused on the field."""
    result = await _choose(hass, provider)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: _url(embedding_server, provider)}
    )
    assert result["step_id"] == "model"
    calls = sum(embedding_server.calls.values())

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: model}
    )

    assert result["errors"] == {CONF_MODEL: "invalid_model"}
    assert sum(embedding_server.calls.values()) == calls


@pytest.mark.parametrize(
    ("provider", "model", "error"),
    [
        ("ollama", "two words", "invalid_model"),
        ("ollama", "hf.co/org/repo:Q4_K_M", "model_not_found"),
        ("gemini", "../../v1/models?key=x#", "invalid_model"),
        ("gemini", "models/embed-small", None),
        ("openai", "two words", "model_not_found"),
        ("openai", "BAAI/bge-m3", "model_not_found"),
    ],
)
async def test_model_names_by_provider(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    provider: str,
    model: str,
    error: str | None,
) -> None:
    """What a model name may hold follows where the provider puts it (path or body)."""
    result = await _choose(hass, provider)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: _url(embedding_server, provider)}
    )

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: model}
    )

    if error is None:
        assert result["type"] is FlowResultType.CREATE_ENTRY
        assert result["data"][CONF_MODEL] == model
    else:
        assert result["errors"] == {
            CONF_MODEL if error == "invalid_model" else "base": error
        }


@pytest.mark.parametrize(
    "answer",
    [
        {"models": "garbage", "data": "garbage"},
        [1, 2, 3],
        {"models": [{"name": ["x"]}, 7], "data": [{"id": {"a": 1}}, None]},
    ],
)
@pytest.mark.parametrize("provider", SERVERS)
async def test_garbage_model_lists(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    provider: str,
    answer: Any,
) -> None:
    """A model list that is not one: the name is typed, and the model still checked."""
    embedding_server.list_answer = answer
    result = await _choose(hass, provider)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: _url(embedding_server, provider)}
    )
    assert result["step_id"] == "model"
    assert not result["errors"]
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "embed-small"}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY


@pytest.mark.parametrize(
    "answer",
    [
        {"data": [{"index": "x", "embedding": [1.0]}]},
        {"data": [{"index": None, "embedding": [1.0]}, {"index": 0}]},
        {"data": [{"index": [], "embedding": [1.0]}]},
        {"embeddings": [[None]], "data": [[None]], "embedding": {"values": [None]}},
        {"embeddings": "x", "data": "x", "embedding": "x"},
        {"embeddings": [], "data": [], "embedding": {"values": []}},
    ],
)
@pytest.mark.parametrize("provider", SERVERS)
async def test_garbage_embeddings(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    provider: str,
    answer: Any,
) -> None:
    """Embeddings that are JSON but not what the protocol promises are named as such."""
    embedding_server.answer = answer
    result = await _choose(hass, provider)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: _url(embedding_server, provider)}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "embed-small"}
    )
    assert result["errors"] == {"base": "invalid_response"}


@pytest.mark.parametrize(
    ("dimension", "error"), [(8192, None), (8193, "dimensions_out_of_range")]
)
async def test_model_dimensions(
    hass: HomeAssistant,
    embedding_server: FakeEmbeddingServer,
    dimension: int,
    error: str | None,
) -> None:
    """A model whose vectors are longer than the store supports is named."""
    embedding_server.dimension = dimension
    result = await _choose(hass, "openai")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: _url(embedding_server, "openai")}
    )
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "embed-small"}
    )
    if error is None:
        assert result["type"] is FlowResultType.CREATE_ENTRY
        assert result["data"]["dimensions"] == dimension
    else:
        assert result["errors"] == {"base": error}


@pytest.mark.parametrize("provider", SERVERS)
async def test_html_answers(
    hass: HomeAssistant, embedding_server: FakeEmbeddingServer, provider: str
) -> None:
    """A web page where the API should be: the model list is skipped, then named."""
    embedding_server.status = 200
    embedding_server.error_text = "<html><body>Welcome to nginx!</body></html>"
    result = await _choose(hass, provider)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_URL: _url(embedding_server, provider)}
    )
    assert result["step_id"] == "model"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: "embed-small"}
    )
    assert result["errors"] == {"base": "invalid_response"}


FOLDERS = ["", "relative/folder", "/nowhere/\x00nul", "/" + "d" * 100_000, "\n"]


@pytest.mark.parametrize("folder", FOLDERS, ids=_ids(FOLDERS))
async def test_model_folder_values(
    hass: HomeAssistant,
    folder: str,
    monkeypatch: pytest.MonkeyPatch,
    socket_enabled: None,
) -> None:
    """A folder that cannot hold the model is named on the field (empty downloads)."""
    # An empty folder starts the download: from a closed local port, refused
    # at once, so the aborted flow's task never reaches for the network or a
    # resolver (whether it got that far depended on timing).
    monkeypatch.setattr(embedding, "MODEL_BASE_URL", "http://127.0.0.1:9")
    result = await _choose(hass, "local")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL_FOLDER: folder}
    )
    if not folder.strip():
        assert result["type"] is FlowResultType.SHOW_PROGRESS
        hass.config_entries.flow.async_abort(result["flow_id"])
        await hass.async_block_till_done()
        return
    assert result["errors"] == {CONF_MODEL_FOLDER: "model_folder_invalid"}


HOSTILE_NUMBERS: list[Any] = [
    "nan",
    float("nan"),
    "inf",
    float("-inf"),
    -1,
    1e300,
    "abc",
    "",
    None,
    "1" * 10_000,
    [1],
]
INIT_NUMBERS = {
    CONF_SEARCH_LIMIT: 5,
    CONF_MIN_SCORE: 0.0,
    CONF_RECALL_BUDGET: 300,
    CONF_RECALL_MIN_SCORE: 0.3,
    CONF_CONVERSATION_RETENTION_DAYS: 30,
}
DIGESTION_NUMBERS = {
    CONF_AI_TASK_MAX_CALLS_PER_HOUR: 10,
    CONF_DIGEST_IDLE_MINUTES: 10,
    CONF_DIGEST_MIN_USER_WORDS: 3,
}


@pytest.mark.parametrize("value", HOSTILE_NUMBERS, ids=_ids(HOSTILE_NUMBERS))
async def test_options_numbers(
    hass: HomeAssistant, init_integration: MockConfigEntry, value: Any
) -> None:
    """Each number of the options, and of its digestion section, refuses nonsense."""
    for key in [*INIT_NUMBERS, *DIGESTION_NUMBERS]:
        start = await hass.config_entries.options.async_init(init_integration.entry_id)
        user_input: dict[str, Any] = {**INIT_NUMBERS}
        section = {"digestion": True, **DIGESTION_NUMBERS}
        if key in INIT_NUMBERS:
            user_input[key] = value
        else:
            section[key] = value
        user_input[DIGESTION_SECTION] = section

        result = await _submit(hass, start["flow_id"], user_input, options=True)

        assert result is None or result["errors"], (key, value)
        _configure_errors(result)
        assert init_integration.options == {}


async def test_options_unknown_satellite(
    hass: HomeAssistant, init_integration: MockConfigEntry
) -> None:
    """A device that is not a voice satellite cannot be mapped to a person."""
    options = {**init_integration.options, "satellite_persons": {"gone": "person.a"}}
    hass.config_entries.async_update_entry(init_integration, options=options)
    start = await hass.config_entries.options.async_init(init_integration.entry_id)
    result = await _submit(
        hass,
        start["flow_id"],
        {**INIT_NUMBERS, DIGESTION_SECTION: {"digestion": True, **DIGESTION_NUMBERS}},
        options=True,
    )
    assert result is not None
    assert result["step_id"] == "satellites"

    for satellite in ("not-a-device", "x" * 100_000, "\x00"):
        answer = await _submit(
            hass,
            result["flow_id"],
            {"satellite": satellite, "person": "person.anna"},
            options=True,
        )
        assert answer is None or answer["errors"] == {"satellite": "satellite_unknown"}
    assert init_integration.options == options


# -- property-based: any text in any provider field ------------------------------

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)


def _often[T](common: list[T], rare: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """Mostly one of `common` (a server that answers), sometimes anything."""
    return st.one_of(st.sampled_from(common), st.sampled_from(common), rare)


# The parts of the local server's URL, each with what may replace it. Hosts
# are the local server or refused before any lookup: the test harness blocks
# DNS (the engine tests fuzz host names without sending anything).
_URL_PARTS: dict[str, tuple[list[str], st.SearchStrategy[str]]] = {
    "scheme": (["http"], st.sampled_from(["https", "HTTP", "file", "ws", ""])),
    "userinfo": (
        [""],
        st.one_of(
            st.sampled_from(["u:p@", "u@", ":@", "a%3Ab:c@", "ü:ß@", "@"]),
            _TEXT.map(lambda text: f"{text}@"),
        ),
    ),
    "host": (["SERVER"], st.sampled_from(["[::1", "::1", "", "a b", "\x00"])),
    "port": (
        [""],
        st.one_of(
            st.sampled_from([":0", ":65536", ":-1", ":x", ":"]),
            st.integers(-(2**70), 2**70).map(lambda n: f":{n}"),
        ),
    ),
    "path": (
        ["", "/", "/v1", "/v1beta"],
        st.one_of(
            st.sampled_from(["/?a", "/#b", "//", "/api/../v1"]),
            _TEXT.map(lambda text: f"/{text}"),
        ),
    ),
}


@st.composite
def _urls(draw: st.DrawFn) -> str:
    """Draw the local server's URL with at most one part hostile, or any text."""
    hostile = draw(st.sampled_from([None, None, None, *_URL_PARTS, "text"]))
    if hostile == "text":
        # Not empty: that means the provider's public default, on the internet.
        return draw(_TEXT.filter(lambda text: text.strip() != ""))
    parts = {
        name: draw(rare if name == hostile else st.sampled_from(common))
        for name, (common, rare) in _URL_PARTS.items()
    }
    return "{scheme}://{userinfo}{host}{port}{path}".format(**parts)


_NO_KEY: list[str | None] = [None]
_KEYS = _often(_NO_KEY, st.one_of(st.just(SECRET), _TEXT))
_MODELS = _often(["embed-small", "nomic-embed-text:latest", "llama3.2:latest"], _TEXT)


@settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    provider=st.sampled_from(SERVERS),
    url=_urls(),
    key=_KEYS,
    model=_MODELS,
)
async def test_any_provider_input(
    hass: HomeAssistant,
    provider_server: FakeEmbeddingServer,
    provider: str,
    url: str,
    key: str | None,
    model: str,
) -> None:
    """Whatever is typed, each step answers a form, the next step or an entry."""
    result = await _choose(hass, provider)
    flow_id = result["flow_id"]
    data = {CONF_URL: url.replace("SERVER", f"127.0.0.1:{provider_server.port}")}
    if key is not None:
        data[CONF_API_KEY] = key
    answer = await _submit(hass, flow_id, data)
    event(f"server step: {sorted(_configure_errors(answer).values()) or 'passed'}")
    if answer is not None and answer.get("step_id") == "model":
        answer = await _submit(hass, flow_id, {CONF_MODEL: model})
        event(f"model step: {sorted(_configure_errors(answer).values()) or 'passed'}")
    if answer is not None and answer["type"] is FlowResultType.CREATE_ENTRY:
        await hass.config_entries.async_remove(answer["result"].entry_id)
    elif answer is None or answer["type"] is FlowResultType.FORM:
        hass.config_entries.flow.async_abort(flow_id)
    await hass.async_block_till_done()
    assert not hass.config_entries.async_entries(DOMAIN)


@pytest.fixture
def provider_server(
    embedding_server: FakeEmbeddingServer, monkeypatch: pytest.MonkeyPatch
) -> FakeEmbeddingServer:
    """One server for all of a property test's examples, with short timeouts."""
    monkeypatch.setattr(provider_http, "LIST_TIMEOUT", 2.0)
    monkeypatch.setattr(provider_http, "REQUEST_TIMEOUT", 2.0)
    return embedding_server
