"""Which vector index Home Assistant uses: the numpy index, with nothing installed.

Earlier versions installed sqlite-vec on demand and used its `vec0` table
wherever it loaded. The numpy index of binary codes now scans faster than
the published sqlite-vec build (which has no SIMD) at every size measured,
and holds less memory than `vec0` (docs/benchmarks/engine.md, issue #25), so
`auto` is the numpy index everywhere and there is nothing to install: on Home
Assistant OS (musl, no sqlite-vec wheel) and elsewhere alike. The failed
install an earlier version remembered in storage is forgotten.
"""

from __future__ import annotations

from typing import Any, Final

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from .const import DOMAIN

STORAGE_VERSION: Final = 1
STORAGE_KEY: Final = f"{DOMAIN}.vector_backend"


def _storage(hass: HomeAssistant) -> Store[dict[str, Any]]:
    return Store(hass, STORAGE_VERSION, STORAGE_KEY)


async def async_vector_backend_available(hass: HomeAssistant) -> bool:
    """Return False: no sqlite-vec, the numpy index serves (see the module)."""
    await async_remove_vector_backend(hass)
    return False


async def async_remove_vector_backend(hass: HomeAssistant) -> None:
    """Forget the failed sqlite-vec install an earlier version remembered."""
    await _storage(hass).async_remove()
