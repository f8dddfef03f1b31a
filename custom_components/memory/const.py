"""Constants of the Assist Memory integration."""

from __future__ import annotations

import logging
from typing import Final

DOMAIN: Final = "memory"
LOGGER = logging.getLogger(__package__)

DATABASE_FOLDER: Final = "memory"
DATABASE_FILE: Final = "memory.db"

CONF_PROVIDER: Final = "provider"
CONF_MODEL: Final = "model"
PROVIDER_KEYWORD: Final = "keyword"

CONF_SEARCH_LIMIT: Final = "search_limit"
CONF_MIN_SCORE: Final = "min_score"
DEFAULT_SEARCH_LIMIT: Final = 5
DEFAULT_MIN_SCORE: Final = 0.0

# Loaded on demand: no musllinux wheel, so not a manifest requirement.
SQLITE_VEC_REQUIREMENT: Final = "sqlite-vec==0.1.9"

# Archive memories whose expiry time has passed this often (seconds).
EXPIRE_INTERVAL_SECONDS: Final = 15 * 60
