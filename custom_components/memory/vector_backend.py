"""Whether sqlite-vec can be used here: installed on demand, at most once per system.

It is not a manifest requirement: it has no musllinux wheel, so listing it
would break set-up on Home Assistant OS and the official container. There
set-up does not try; elsewhere a failed install is remembered (until the
requirement, Python or the platform changes), so that it is not retried,
with Home Assistant's install ERROR in the log, at every start.
"""

from __future__ import annotations

import platform
import sysconfig
from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store
from homeassistant.requirements import RequirementsNotFound, async_process_requirements
from packaging.tags import platform_tags

from .const import DOMAIN, LOGGER, SQLITE_VEC_REQUIREMENT

STORAGE_VERSION: Final = 1
STORAGE_KEY: Final = f"{DOMAIN}.vector_backend"


def is_musl() -> bool:
    """Tell whether the C library is musl (Home Assistant OS and its container)."""
    return any(tag.startswith("musllinux") for tag in platform_tags())


def _attempt() -> dict[str, str]:
    """Describe what an install depends on: when one changes, try again."""
    return {
        "requirement": SQLITE_VEC_REQUIREMENT,
        "python": platform.python_version(),
        "platform": sysconfig.get_platform(),
    }


def _storage(hass: HomeAssistant) -> Store[dict[str, Any]]:
    return Store(hass, STORAGE_VERSION, STORAGE_KEY)


async def async_vector_backend_available(hass: HomeAssistant) -> bool:
    """Install sqlite-vec on demand; False means the numpy index is used."""
    if is_musl():
        LOGGER.debug("sqlite-vec has no build for musl; using the numpy vector index")
        return False
    storage = _storage(hass)
    stored = await storage.async_load() or {}
    if stored.get("failed") == _attempt():
        LOGGER.debug("sqlite-vec failed to install before; using the numpy index")
        return False
    try:
        await async_process_requirements(
            hass, DOMAIN, [SQLITE_VEC_REQUIREMENT], is_built_in=False
        )
    except RequirementsNotFound:
        LOGGER.info("sqlite-vec is not available here; using the numpy vector index")
        await storage.async_save({"failed": _attempt()})
        return False
    if stored:
        await storage.async_remove()
    return True


async def async_remove_vector_backend(hass: HomeAssistant) -> None:
    """Forget a failed install with the integration."""
    await _storage(hass).async_remove()
