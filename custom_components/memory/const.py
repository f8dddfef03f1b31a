"""Constants of the Assist Memory integration."""

from __future__ import annotations

from datetime import timedelta
import logging
from typing import Final

from .engine.recall import RecallSettings

# Recall's defaults are the engine's (`RecallSettings`), named here for the
# options flow and the options' reading.
_RECALL: Final = RecallSettings()

DOMAIN: Final = "memory"
LOGGER = logging.getLogger(__package__)

DATABASE_FOLDER: Final = "memory"
DATABASE_FILE: Final = "memory.db"

# Where the memories are stored (entry data): this Home Assistant's SQLite
# file (the default; entries made before the choice have no key), or a
# PostgreSQL server with pgvector at `db_url` (as the recorder's).
CONF_BACKEND: Final = "backend"
BACKEND_SQLITE: Final = "sqlite"
BACKEND_POSTGRESQL: Final = "postgresql"
CONF_DB_URL: Final = "db_url"

CONF_PROVIDER: Final = "provider"
CONF_MODEL: Final = "model"
PROVIDER_KEYWORD: Final = "keyword"

CONF_SEARCH_LIMIT: Final = "search_limit"
CONF_MIN_SCORE: Final = "min_score"
DEFAULT_SEARCH_LIMIT: Final = 5
DEFAULT_MIN_SCORE: Final = 0.0

# Archive memories whose expiry time has passed this often (seconds).
EXPIRE_INTERVAL_SECONDS: Final = 15 * 60

# Embedding providers (entry data: provider, url, api_key, model, dimensions).
PROVIDER_LOCAL: Final = "local"
PROVIDER_OLLAMA: Final = "ollama"
PROVIDER_OPENAI: Final = "openai"
PROVIDER_GEMINI: Final = "gemini"
CONF_DIMENSIONS: Final = "dimensions"
# Built-in model weights live in <config>/memory/models/.
MODELS_FOLDER: Final = "models"
# A provider down this long (seconds) gets a repair issue.
PROVIDER_DOWN_ISSUE_SECONDS: Final = 30 * 60
ISSUE_PROVIDER_UNAVAILABLE: Final = "provider_unavailable"
ISSUE_DIMENSION_CHANGED: Final = "dimension_changed"
# The model reads Home Assistant's language poorly (`vectors.Readings`).
ISSUE_MODEL_READS_POORLY: Final = "model_reads_language_poorly"

# Assist: automatic recall (the "Memory" LLM API, id DOMAIN), memory tools for
# the Assist API, and conversation capture.
LLM_API_NAME: Final = "Memory"
CONF_RECALL_BUDGET: Final = "recall_budget"
CONF_RECALL_MIN_SCORE: Final = "recall_min_score"
CONF_CONVERSATION_RETENTION_DAYS: Final = "conversation_retention_days"
# {device id of a voice satellite: person entity id}
CONF_SATELLITE_PERSONS: Final = "satellite_persons"
# Tokens (estimated) recall may add to a prompt; 0 turns recall off.
DEFAULT_RECALL_BUDGET: Final = _RECALL.budget
MAX_RECALL_BUDGET: Final = 2000
# Memories scoring under this for what was just said stay out of the prompt
# (0.12, measured: engine/recall/turn.RecallSettings says where).
DEFAULT_RECALL_MIN_SCORE: Final = _RECALL.min_score
# Across a conversation (engine/recall/turn.py): follow-ups searched with the
# earlier turns, memories that stay, and the "Earlier" lines of a new
# conversation, looking back this many hours (0: off).
CONF_RECALL_FOLLOW_UPS: Final = "recall_follow_ups"
CONF_RECALL_KEEP: Final = "recall_keep"
CONF_RECALL_EARLIER_HOURS: Final = "recall_earlier_hours"
DEFAULT_RECALL_FOLLOW_UPS: Final = _RECALL.follow_ups
DEFAULT_RECALL_KEEP: Final = _RECALL.keep
DEFAULT_RECALL_EARLIER_HOURS: Final = int(_RECALL.earlier / timedelta(hours=1))
MAX_RECALL_EARLIER_HOURS: Final = 48
# 0 days: conversations are not kept at all.
DEFAULT_CONVERSATION_RETENTION_DAYS: Final = 30
MAX_CONVERSATION_RETENTION_DAYS: Final = 3650

# Set-up of the built-in model from a local folder instead of a download.
CONF_MODEL_FOLDER: Final = "model_folder"

# Digestion and profiles through the household's AI Task entity
# (custom_components/memory/ai_task.py). An empty entity id means Home
# Assistant's preferred AI Task entity.
CONF_AI_TASK_ENTITY: Final = "ai_task_entity"
# Every AI Task call (digestion, consolidation questions, profiles) counts.
CONF_AI_TASK_MAX_CALLS_PER_HOUR: Final = "ai_task_max_calls_per_hour"
DEFAULT_AI_TASK_MAX_CALLS_PER_HOUR: Final = 20
# `memory.export` writes under <config>/memory/export/.
EXPORT_FOLDER: Final = "export"
# Digestion (digestion.py): turn ended conversations into memories.
CONF_DIGESTION: Final = "digestion"
# Digest a conversation left open this long (minutes); 0: only once it ends.
CONF_DIGEST_IDLE_MINUTES: Final = "digest_idle_minutes"
DEFAULT_DIGEST_IDLE_MINUTES: Final = 30
MAX_DIGEST_IDLE_MINUTES: Final = 24 * 60
# Conversations with fewer words from the user are not worth an AI Task call.
CONF_DIGEST_MIN_USER_WORDS: Final = "digest_min_user_words"
DEFAULT_DIGEST_MIN_USER_WORDS: Final = 5
# Conversation agents (entity ids) and satellites (device ids) never digested.
CONF_DIGEST_SKIP_AGENTS: Final = "digest_skip_agents"
CONF_DIGEST_SKIP_DEVICES: Final = "digest_skip_devices"
ISSUE_AI_TASK_UNAVAILABLE: Final = "ai_task_unavailable"

# Fields of the actions' data.
ATTR_CONTENT: Final = "content"
ATTR_TYPE: Final = "type"
ATTR_TAGS: Final = "tags"
ATTR_PERSON: Final = "person"
ATTR_EXPIRES_AT: Final = "expires_at"
ATTR_EXPIRES_IN: Final = "expires_in"
ATTR_QUERY: Final = "query"
ATTR_TYPES: Final = "types"
ATTR_STATUS: Final = "status"
ATTR_SINCE: Final = "since"
ATTR_RECENCY_DAYS: Final = "recency_days"
ATTR_LIMIT: Final = "limit"
ATTR_MIN_SCORE: Final = "min_score"
ATTR_LANGUAGE: Final = "language"
ATTR_IDS: Final = "ids"
ATTR_ID: Final = "id"
ATTR_DRY_RUN: Final = "dry_run"
ATTR_PURGE: Final = "purge"
ATTR_SOURCE: Final = "source"
ATTR_CONVERSATION_ID: Final = "conversation_id"
ATTR_CONVERSATION: Final = "conversation"
ATTR_EVERYTHING: Final = "everything"
