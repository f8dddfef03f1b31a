"""Digestion: conversations turned into memories.

`queue` (what waits, transcripts, skips), `device_commands` with
`device_words` (one module per language; turns that only command a device),
`extraction` (the prompt and reading its answer), `profile_prompt` (a
profile's prompt and cleaning its answer), `answers` (the JSON in a
model's text), `consolidation` with `near_duplicates` and `question`
(add, supersede or reword against what is stored).
"""

from .answers import extraction_answer
from .consolidation import Action, Candidate, Consolidator, Plan
from .extraction import (
    MEMORY_TYPES,
    RESOLUTION_ACTIONS,
    DigestResult,
    Extracted,
    SpeakerPart,
    consolidate,
    extraction_prompt,
    known_memories,
    known_query,
    names_for,
    part_source,
    read_extraction,
    read_resolutions,
    speaker_names,
    speaker_parts,
    summary_memory,
)
from .near_duplicates import DEFAULT_THRESHOLDS, conflicting, content_terms
from .profile_prompt import (
    NOTES_BUDGET,
    PROFILE_MAX_TOKENS,
    clean_profile,
    notes_language,
    pick_notes,
    profile_instructions,
)
from .question import question
from .queue import (
    DigestQueue,
    DigestState,
    PendingConversation,
    SkipReason,
    backoff_seconds,
)

__all__ = [
    "DEFAULT_THRESHOLDS",
    "MEMORY_TYPES",
    "NOTES_BUDGET",
    "PROFILE_MAX_TOKENS",
    "RESOLUTION_ACTIONS",
    "Action",
    "Candidate",
    "Consolidator",
    "DigestQueue",
    "DigestResult",
    "DigestState",
    "Extracted",
    "PendingConversation",
    "Plan",
    "SkipReason",
    "SpeakerPart",
    "backoff_seconds",
    "clean_profile",
    "conflicting",
    "consolidate",
    "content_terms",
    "extraction_answer",
    "extraction_prompt",
    "known_memories",
    "known_query",
    "names_for",
    "notes_language",
    "part_source",
    "pick_notes",
    "profile_instructions",
    "question",
    "read_extraction",
    "read_resolutions",
    "speaker_names",
    "speaker_parts",
    "summary_memory",
]
