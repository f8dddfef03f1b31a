"""Digestion: conversations turned into memories.

`queue` (what waits, transcripts, skips), `device_commands` with
`device_words` and `device_words_more` (turns that only command a device),
`extraction` (the prompt and reading its answer), `answers` (the JSON in a
model's text), `consolidation` with `near_duplicates` and `question`
(add, supersede or reword against what is stored).
"""
