"""A loaded entry's runtime data: the store and the workers built on it.

Platforms, actions and LLM tools reach them from the typed entry. The workers
themselves never do: each gets what it uses passed in (`__init__.py` wires
them), so this module can name their classes without an import circle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError

from .ai_task import AITaskClient
from .capture import ConversationCapture
from .const import DOMAIN
from .coordinator import MemoryStatsCoordinator
from .digestion import Digestion
from .embedding import EmbeddingRuntime
from .engine.postgres import AnyConversationLog, AnyStore
from .engine.recall import ConversationStates
from .profile import ProfileKeeper
from .usage import UsageTracker
from .worker import BackgroundWorker

type MemoryConfigEntry = ConfigEntry[MemoryData]


@dataclass(slots=True)
class MemoryData:
    """What a loaded entry holds; platforms and actions reach it from the entry."""

    store: AnyStore
    coordinator: MemoryStatsCoordinator
    # Assist: the conversation log, its capture, and recall/capture counters.
    conversations: AnyConversationLog
    capture: ConversationCapture
    usage: UsageTracker
    # Digestion: the household's LLM through AI Task, and the pipeline that
    # turns ended conversations into memories.
    ai_task: AITaskClient
    digestion: Digestion
    # Each scope's profile, distilled through AI Task.
    profiles: ProfileKeeper
    # The embedding worker and breaker; None on keyword-only search.
    embedding: EmbeddingRuntime | None = None
    # What recall keeps of each live conversation between its turns.
    recall_states: ConversationStates = field(default_factory=ConversationStates)

    @property
    def workers(self) -> tuple[BackgroundWorker, ...]:
        """The background workers, in the order they stop.

        Digestion first: it reads and writes the store, and capture calls it.
        Embedding before capture: the store must stay open for both, and
        capture last writes what it still holds.
        """
        embedding = () if self.embedding is None else (self.embedding,)
        return (self.digestion, self.profiles, *embedding, self.capture)


def loaded_entry(hass: HomeAssistant) -> MemoryConfigEntry:
    """Return the single loaded entry; a translated validation error without one.

    The call itself is fine but cannot be served now (set-up failed, or the
    entry is disabled or unloaded): the caller has something to fix, not a
    crash to report.
    """
    entries: list[MemoryConfigEntry] = hass.config_entries.async_loaded_entries(DOMAIN)
    if not entries:
        raise ServiceValidationError(
            translation_domain=DOMAIN, translation_key="not_loaded"
        )
    return entries[0]
