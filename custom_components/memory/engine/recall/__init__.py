"""Recall: the memory block of one conversation turn.

`turn` (search, follow-ups, memories that stay, "Earlier"), `followups`
(does an utterance carry on) with `followup_words`, `earlier` (the same
speaker's recent conversations).
"""
