"""Database schema, versioned through `PRAGMA user_version`.

`MIGRATIONS[i]` takes a database from version i to i + 1. Never edit a
migration that has shipped; append a new one.
"""

from __future__ import annotations

from typing import Final

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    # 0 -> 1: memories, tags, full-text index, vectors per model.
    (
        """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope TEXT NOT NULL,
            type TEXT NOT NULL,
            content TEXT NOT NULL,
            content_key TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'archived', 'superseded')),
            superseded_by INTEGER REFERENCES memories(id) ON DELETE SET NULL,
            valid_from REAL,
            valid_to REAL,
            expires_at REAL,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            last_recalled_at REAL,
            recall_count INTEGER NOT NULL DEFAULT 0,
            origin TEXT NOT NULL,
            conversation_id TEXT,
            agent_id TEXT,
            device_id TEXT,
            user_id TEXT
        )
        """,
        # One active copy of the same normalised text per scope.
        """
        CREATE UNIQUE INDEX memories_active_content
            ON memories (scope, content_key) WHERE status = 'active'
        """,
        "CREATE INDEX memories_status_created ON memories (status, created_at)",
        "CREATE INDEX memories_scope ON memories (scope, status)",
        """
        CREATE INDEX memories_expires ON memories (expires_at)
            WHERE expires_at IS NOT NULL
        """,
        """
        CREATE TABLE memory_tags (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            tag TEXT NOT NULL,
            PRIMARY KEY (memory_id, tag)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX memory_tags_tag ON memory_tags (tag)",
        """
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            content, tags,
            content = 'memories', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        )
        """,
        """
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, content, tags)
                VALUES (new.id, new.content, new.tags);
        END
        """,
        """
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, content, tags)
                VALUES ('delete', old.id, old.content, old.tags);
        END
        """,
        """
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, tags
            ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, content, tags)
                VALUES ('delete', old.id, old.content, old.tags);
            INSERT INTO memories_fts (rowid, content, tags)
                VALUES (new.id, new.content, new.tags);
        END
        """,
        # The dimension is learned from the first vector a model produces.
        """
        CREATE TABLE embedding_models (
            model TEXT PRIMARY KEY,
            dim INTEGER NOT NULL CHECK (dim > 0),
            created_at REAL NOT NULL
        )
        """,
        """
        CREATE TABLE embeddings (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            model TEXT NOT NULL REFERENCES embedding_models(model) ON DELETE CASCADE,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, memory_id)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX embeddings_memory ON embeddings (memory_id)",
    ),
)

SCHEMA_VERSION: Final = len(MIGRATIONS)
