"""Conversations: the message log, its pages and its search.

`log` (ConversationLog: save, read, erase), `records` (conversation and
message records, their rows), `browse` (the panel's pages, digestion states,
where a memory came from), `search` (messages found by the hybrid search).
"""
