"""The Memory panel in the sidebar: registered with the entry, served, removed on unload.

Home Assistant's real frontend integration (the `home-assistant-frontend`
package) is set up first, as `default_config` does; the panel's bundle is
fetched over HTTP the way a browser does.
"""

from __future__ import annotations

from homeassistant.components import frontend
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.memory.panel import BUNDLE, PANEL_ELEMENT, PANEL_URL_PATH


async def test_the_panel_is_there_for_every_user_while_loaded(
    hass: HomeAssistant,
    mock_config_entry: MockConfigEntry,
    hass_client: ClientSessionGenerator,
) -> None:
    """Set-up adds "Memory" to the sidebar for all users; unload takes it away."""
    assert await async_setup_component(hass, "frontend", {})
    mock_config_entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()

    panel = hass.data[frontend.DATA_PANELS][PANEL_URL_PATH]
    assert panel.sidebar_title == "Memory"
    assert panel.sidebar_icon == "mdi:brain"
    assert panel.require_admin is False
    assert panel.config is not None
    custom = panel.config["_panel_custom"]
    assert custom["name"] == PANEL_ELEMENT
    module_url: str = custom["module_url"]
    # The bundle's own hash is in its URL: a new version is never a cached one.
    version = panel.config["version"]
    assert version in module_url

    client = await hass_client()
    response = await client.get(module_url)
    assert response.status == 200
    assert await response.read() == BUNDLE.read_bytes()
    assert "max-age" in response.headers.get("Cache-Control", "")

    assert await hass.config_entries.async_unload(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    assert PANEL_URL_PATH not in hass.data[frontend.DATA_PANELS]
    # Loaded again, it is back (the bundle's route is not registered twice).
    assert await hass.config_entries.async_setup(mock_config_entry.entry_id)
    await hass.async_block_till_done()
    assert PANEL_URL_PATH in hass.data[frontend.DATA_PANELS]


async def test_the_bundle_defines_the_panel_element() -> None:
    """The committed bundle is the web component the panel names."""
    bundle = BUNDLE.read_text(encoding="utf-8")
    assert f'customElements.define("{PANEL_ELEMENT}"' in bundle
    for command in (
        "memory/browse",
        "memory/get",
        "memory/subscribe",
        "memory/forget",
        "memory/restore",
        "memory/add",
        "memory/update",
        "memory/overview",
        "memory/refresh_profile",
    ):
        assert command in bundle
