"""Search: keyword and vector candidates fused into one ranking.

`keywords` (a query's terms, weights, the bounded FTS5 MATCH), `semantic`
(the vector pool and exact cosines), `fusion` (both signals on their own
scales, combined), `memories` (the memories' hybrid search).
"""
