"""Store: the database file and the memories table.

`database` (connections, pragmas, migrations via `schema`, the writes'
lock, listeners), `integrity`, `files`, `vec0_leftovers`; the memories
table: `rows` (validation, mapping, inserts), `memories`, `memory_vectors`,
`curation`, `browse` (pages and history), `lookups`, `reanalysis`.
"""
