"""Recall: the memory block of one conversation turn.

`turn` (search, follow-ups, memories that stay, "Earlier"), `followups`
(does an utterance carry on) with `followup_words`, `earlier` (the same
speaker's recent conversations).
"""

from .turn import (
    FENCE_CLOSE,
    FENCE_OPEN,
    NOTHING,
    PROMPT_HEADER,
    RECALL_CANDIDATES,
    ConversationStates,
    Recalled,
    RecallSettings,
    Speaker,
    Turn,
    recall_turn,
    render,
)

__all__ = [
    "FENCE_CLOSE",
    "FENCE_OPEN",
    "NOTHING",
    "PROMPT_HEADER",
    "RECALL_CANDIDATES",
    "ConversationStates",
    "RecallSettings",
    "Recalled",
    "Speaker",
    "Turn",
    "recall_turn",
    "render",
]
