"""The Memory panel in the sidebar: registered while the entry is loaded.

The web component (`frontend/memory-panel.js`, built by
`script/build-frontend` from `frontend/src/` at the repository root and
committed, since HACS users cannot build) is served from the integration's
folder under a URL that holds the bundle's own hash, so a new version is
never taken from a cache. Every user sees the panel; what it lists is
filtered per user by the websocket API (`websocket_api.py`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

from homeassistant.components import frontend, panel_custom
from homeassistant.components.http.server import StaticPathConfig
from homeassistant.core import HomeAssistant

from .const import DOMAIN

PANEL_URL_PATH: Final = "memory"
PANEL_ELEMENT: Final = "memory-panel"
PANEL_ICON: Final = "mdi:brain"
PANEL_TITLE: Final = "Memory"
BUNDLE: Final = Path(__file__).parent / "frontend" / "memory-panel.js"
STATIC_URL: Final = f"/{DOMAIN}_panel"


def _bundle_version() -> str:
    """Return the bundle's content hash (read once per start, off the event loop)."""
    return hashlib.sha256(BUNDLE.read_bytes()).hexdigest()[:12]


async def async_register_panel(hass: HomeAssistant) -> bool:
    """Serve the bundle and add the panel; False when the frontend is not set up."""
    if "frontend" not in hass.config.components or frontend.async_panel_exists(
        hass, PANEL_URL_PATH
    ):
        return False
    version = await hass.async_add_executor_job(_bundle_version)
    served = f"{STATIC_URL}/{version}"
    if not hass.data.get(f"{DOMAIN}_static_{version}"):
        # A static route cannot be removed: register each version once.
        await hass.http.async_register_static_paths(
            [StaticPathConfig(served, str(BUNDLE.parent), cache_headers=True)]
        )
        hass.data[f"{DOMAIN}_static_{version}"] = True
    await panel_custom.async_register_panel(
        hass,
        frontend_url_path=PANEL_URL_PATH,
        webcomponent_name=PANEL_ELEMENT,
        sidebar_title=PANEL_TITLE,
        sidebar_icon=PANEL_ICON,
        module_url=f"{served}/{BUNDLE.name}",
        require_admin=False,
        config={"version": version},
    )
    return True


def async_remove_panel(hass: HomeAssistant) -> None:
    """Take the panel out of the sidebar (unload)."""
    if frontend.async_panel_exists(hass, PANEL_URL_PATH):
        frontend.async_remove_panel(hass, PANEL_URL_PATH)
