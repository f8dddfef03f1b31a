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
        # A rowid table, not WITHOUT ROWID: a 384-dim vector (1,536 bytes)
        # exceeds an index b-tree's inline payload and spilled into an
        # overflow page each, tripling the table (bench/engine.py).
        """
        CREATE TABLE embeddings (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            model TEXT NOT NULL REFERENCES embedding_models(model) ON DELETE CASCADE,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, memory_id)
        )
        """,
        "CREATE INDEX embeddings_memory ON embeddings (memory_id)",
    ),
    # Embedding work per memory and model (engine/embedding/queue.py): its
    # state survives a restart; `text_hash` finds a vector already made for
    # the same text (the cache), and goes with the memory when it is purged.
    (
        """
        CREATE TABLE embedding_jobs (
            memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            text_hash BLOB NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'ready', 'error')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at REAL NOT NULL DEFAULT 0,
            error TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (model, memory_id)
        ) WITHOUT ROWID
        """,
        """
        CREATE INDEX embedding_jobs_due
            ON embedding_jobs (model, state, attempts, next_attempt_at)
        """,
        "CREATE INDEX embedding_jobs_text ON embedding_jobs (model, text_hash)",
        "CREATE INDEX embedding_jobs_memory ON embedding_jobs (memory_id)",
        # A model whose existing memories are still being embedded: searches
        # stay keyword-only until its row is gone.
        """
        CREATE TABLE embedding_rebuilds (
            model TEXT PRIMARY KEY,
            total INTEGER NOT NULL,
            started_at REAL NOT NULL
        )
        """,
    ),
    # The conversation log (engine/conversations/log.py): every Assist message,
    # kept for search and later digestion. A row of `conversations` is one
    # chat session (Home Assistant may reuse a conversation id later, so it
    # is not the key); each message carries the scope of who was speaking.
    (
        """
        CREATE TABLE conversations (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation_id TEXT NOT NULL,
            scope TEXT NOT NULL,
            agent_id TEXT,
            user_id TEXT,
            device_id TEXT,
            started_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            ended_at REAL
        )
        """,
        "CREATE INDEX conversations_conversation_id ON conversations (conversation_id)",
        "CREATE INDEX conversations_updated ON conversations (updated_at)",
        """
        CREATE TABLE conversation_messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversation INTEGER NOT NULL
                REFERENCES conversations(id) ON DELETE CASCADE,
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool_result')),
            content TEXT NOT NULL,
            data TEXT NOT NULL DEFAULT '',
            tool_name TEXT,
            tool_call_id TEXT,
            scope TEXT NOT NULL,
            agent_id TEXT,
            user_id TEXT,
            device_id TEXT,
            created_at REAL NOT NULL
        )
        """,
        """
        CREATE INDEX conversation_messages_conversation
            ON conversation_messages (conversation, id)
        """,
        """
        CREATE INDEX conversation_messages_scope
            ON conversation_messages (scope, created_at)
        """,
        """
        CREATE INDEX conversation_messages_created
            ON conversation_messages (created_at)
        """,
        # Same tokenizer as memories_fts; `data` holds tool calls and results.
        """
        CREATE VIRTUAL TABLE conversation_messages_fts USING fts5(
            content, data,
            content = 'conversation_messages', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        )
        """,
        """
        CREATE TRIGGER conversation_messages_fts_insert
            AFTER INSERT ON conversation_messages BEGIN
            INSERT INTO conversation_messages_fts (rowid, content, data)
                VALUES (new.id, new.content, new.data);
        END
        """,
        """
        CREATE TRIGGER conversation_messages_fts_delete
            AFTER DELETE ON conversation_messages BEGIN
            INSERT INTO conversation_messages_fts
                (conversation_messages_fts, rowid, content, data)
                VALUES ('delete', old.id, old.content, old.data);
        END
        """,
        # Recall reads the newest profile memories every turn: without this
        # the listing walks every active memory by date (5 ms at 10k).
        """
        CREATE INDEX memories_type_recent
            ON memories (type, status, created_at)
        """,
    ),
    # Digestion: what an extracted memory is about (`topic`, the extractor's
    # short subject key such as "home city"), how sure the extractor was, and
    # the message it came from; and each conversation's digestion state, so
    # a failed AI Task call leaves it pending for a retry with backoff.
    (
        "ALTER TABLE memories ADD COLUMN topic TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE memories ADD COLUMN confidence REAL",
        "ALTER TABLE memories ADD COLUMN message_id INTEGER",
        """
        CREATE INDEX memories_topic ON memories (scope, topic)
            WHERE topic != '' AND status = 'active'
        """,
        """
        ALTER TABLE conversations ADD COLUMN digest_state TEXT NOT NULL
            DEFAULT 'pending'
            CHECK (digest_state IN ('pending', 'done', 'skipped'))
        """,
        "ALTER TABLE conversations ADD COLUMN digest_attempts INTEGER NOT NULL DEFAULT 0",
        "ALTER TABLE conversations ADD COLUMN digest_next_at REAL NOT NULL DEFAULT 0",
        "ALTER TABLE conversations ADD COLUMN digest_error TEXT",
        "ALTER TABLE conversations ADD COLUMN digested_at REAL",
        """
        CREATE INDEX conversations_digest
            ON conversations (digest_state, digest_next_at)
        """,
    ),
    # Message vectors: user and assistant messages are embedded by the same
    # queue as memories (engine/embedding/queue.py), with jobs, vectors and
    # rebuilds of their own. Purging a message cascades to its job and
    # vector, hash included. `id` grows with every vector written (a replaced
    # one too): the log's in-memory index catches up from the last id it read.
    (
        """
        CREATE TABLE message_embeddings (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            message_id INTEGER NOT NULL
                REFERENCES conversation_messages(id) ON DELETE CASCADE,
            model TEXT NOT NULL
                REFERENCES embedding_models(model) ON DELETE CASCADE,
            vector BLOB NOT NULL,
            UNIQUE (model, message_id)
        )
        """,
        "CREATE INDEX message_embeddings_message ON message_embeddings (message_id)",
        """
        CREATE TABLE message_embedding_jobs (
            message_id INTEGER NOT NULL
                REFERENCES conversation_messages(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            text_hash BLOB NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending'
                CHECK (state IN ('pending', 'ready', 'error')),
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at REAL NOT NULL DEFAULT 0,
            error TEXT,
            updated_at REAL NOT NULL,
            PRIMARY KEY (model, message_id)
        ) WITHOUT ROWID
        """,
        """
        CREATE INDEX message_embedding_jobs_due
            ON message_embedding_jobs (model, state, attempts, next_attempt_at)
        """,
        """
        CREATE INDEX message_embedding_jobs_text
            ON message_embedding_jobs (model, text_hash)
        """,
        """
        CREATE INDEX message_embedding_jobs_message
            ON message_embedding_jobs (message_id)
        """,
        # Like embedding_rebuilds: message search stays keyword-only while a
        # model's row is here.
        """
        CREATE TABLE message_embedding_rebuilds (
            model TEXT PRIMARY KEY,
            total INTEGER NOT NULL,
            started_at REAL NOT NULL
        )
        """,
    ),
    # A conversation row keeps who started it: earlier versions moved its
    # scope, user and device to whoever spoke last, so a person who continued
    # someone's conversation took it over. Each message always kept its own
    # speaker's scope; the row takes its first message's speaker back.
    (
        """
        UPDATE conversations SET (scope, user_id, device_id) = (
            SELECT m.scope, m.user_id, m.device_id FROM conversation_messages m
            WHERE m.conversation = conversations.id ORDER BY m.id LIMIT 1
        )
        WHERE EXISTS (
            SELECT 1 FROM conversation_messages m
            WHERE m.conversation = conversations.id
        )
        """,
    ),
    # Keyword search in the household's language: every memory and message
    # keeps the language it was said in (`language`, a primary subtag such
    # as "de"; '' = unknown, analysed in the store's default language), and
    # its searchable terms as the analysers of `analysis.py` make them
    # (stems without stop words, compound tails, CJK bigrams). FTS5 indexes
    # those terms instead of the raw text. `analysed` is the analysis
    # version a row's terms were made with: rows below the current one,
    # every row after this migration, are re-analysed in the background
    # (`MemoryStore.reanalyse`), so set-up never waits for it.
    (
        "ALTER TABLE memories ADD COLUMN language TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE memories ADD COLUMN terms TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE memories ADD COLUMN analysed INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX memories_analysed ON memories (analysed)",
        "DROP TRIGGER memories_fts_insert",
        "DROP TRIGGER memories_fts_delete",
        "DROP TRIGGER memories_fts_update",
        "DROP TABLE memories_fts",
        # One column: the terms of the text and of its tags (tags are
        # analysed like words, so "allergies" finds the tag "allergy").
        """
        CREATE VIRTUAL TABLE memories_fts USING fts5(
            terms,
            content = 'memories', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        )
        """,
        """
        CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, terms) VALUES (new.id, new.terms);
        END
        """,
        """
        CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, terms)
                VALUES ('delete', old.id, old.terms);
        END
        """,
        """
        CREATE TRIGGER memories_fts_update AFTER UPDATE OF terms ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, terms)
                VALUES ('delete', old.id, old.terms);
            INSERT INTO memories_fts (rowid, terms) VALUES (new.id, new.terms);
        END
        """,
        # Every row is in the index from the start, with no terms until it is
        # re-analysed: the update trigger's 'delete' must find what it removes.
        "INSERT INTO memories_fts (memories_fts) VALUES ('rebuild')",
        # The index's own term list: how many rows hold a term (common terms
        # stop driving the match) and which compound parts exist at all.
        "CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row')",
        "ALTER TABLE conversation_messages ADD COLUMN language TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE conversation_messages ADD COLUMN terms TEXT NOT NULL DEFAULT ''",
        """
        ALTER TABLE conversation_messages ADD COLUMN analysed INTEGER NOT NULL
            DEFAULT 0
        """,
        """
        CREATE INDEX conversation_messages_analysed
            ON conversation_messages (analysed)
        """,
        "DROP TRIGGER conversation_messages_fts_insert",
        "DROP TRIGGER conversation_messages_fts_delete",
        "DROP TABLE conversation_messages_fts",
        # `data` (tool calls and results) stays plain unicode61 words.
        """
        CREATE VIRTUAL TABLE conversation_messages_fts USING fts5(
            terms, data,
            content = 'conversation_messages', content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        )
        """,
        """
        CREATE TRIGGER conversation_messages_fts_insert
            AFTER INSERT ON conversation_messages BEGIN
            INSERT INTO conversation_messages_fts (rowid, terms, data)
                VALUES (new.id, new.terms, new.data);
        END
        """,
        """
        CREATE TRIGGER conversation_messages_fts_delete
            AFTER DELETE ON conversation_messages BEGIN
            INSERT INTO conversation_messages_fts
                (conversation_messages_fts, rowid, terms, data)
                VALUES ('delete', old.id, old.terms, old.data);
        END
        """,
        """
        CREATE TRIGGER conversation_messages_fts_update
            AFTER UPDATE OF terms ON conversation_messages BEGIN
            INSERT INTO conversation_messages_fts
                (conversation_messages_fts, rowid, terms, data)
                VALUES ('delete', old.id, old.terms, old.data);
            INSERT INTO conversation_messages_fts (rowid, terms, data)
                VALUES (new.id, new.terms, new.data);
        END
        """,
        """
        INSERT INTO conversation_messages_fts (conversation_messages_fts)
            VALUES ('rebuild')
        """,
        """
        CREATE VIRTUAL TABLE conversation_messages_fts_vocab
            USING fts5vocab(conversation_messages_fts, 'row')
        """,
    ),
    # Summaries stay summaries (memory_rows.memory_key): a summary's key
    # holds its type and conversation, so a fact of the same words, or
    # another conversation's summary, is its own memory.
    (
        """
        UPDATE memories SET content_key = 'summary:' ||
            coalesce(conversation_id, '') || ':' || content_key
        WHERE type = 'summary' AND content_key NOT LIKE 'summary:%'
        """,
    ),
    # The panel's Conversations view (conversation_browse.py): pages by start
    # time, and which memories a conversation gave (by the message digestion
    # cited, or by the conversation id a tool added one in).
    (
        "CREATE INDEX conversations_started ON conversations (started_at, id)",
        """
        CREATE INDEX memories_message ON memories (message_id)
            WHERE message_id IS NOT NULL
        """,
        """
        CREATE INDEX memories_conversation ON memories (conversation_id)
            WHERE conversation_id IS NOT NULL
        """,
    ),
    # The store's own settings by name, such as how far a background pass
    # got: `secret_recheck.py` keeps the secret detector's version whose
    # findings the stored vectors reflect. A store with rows has none yet
    # (every row is checked once); an empty one has nothing to check against
    # detector 2, the one of this migration.
    (
        """
        CREATE TABLE store_settings (
            name TEXT PRIMARY KEY,
            value INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
        """
        INSERT INTO store_settings (name, value)
            SELECT 'secrets_checked', 2
            WHERE NOT EXISTS (SELECT 1 FROM memories)
            AND NOT EXISTS (SELECT 1 FROM conversation_messages)
        """,
    ),
    # A reworded memory's embedding jobs start again (its vectors are gone,
    # `MemoryVectors.delete`): the jobs table's own rule, kept beside it in
    # the database rather than in the memories table's code, which may not
    # reach the embedding room. A pending job's `text_hash` is not read (the
    # queue hashes the text it claims), so it is left as it was.
    (
        """
        CREATE TRIGGER memories_reworded_jobs AFTER UPDATE OF content ON memories
        WHEN old.content IS NOT new.content BEGIN
            UPDATE embedding_jobs SET state = 'pending', attempts = 0,
                next_attempt_at = 0, error = NULL, updated_at = new.updated_at
            WHERE memory_id = new.id;
        END
        """,
    ),
    # The numpy index's codes (vectors/codes.py), read at open instead of the
    # vectors: written with a vector, gone with it by the foreign key. Made
    # by Python, so the first open fills the table (store/memory_vectors.py).
    (
        """
        CREATE TABLE embedding_codes (
            model TEXT NOT NULL,
            memory_id INTEGER NOT NULL,
            code BLOB NOT NULL,
            PRIMARY KEY (model, memory_id),
            FOREIGN KEY (model, memory_id)
                REFERENCES embeddings (model, memory_id) ON DELETE CASCADE
        ) WITHOUT ROWID
        """,
    ),
)

SCHEMA_VERSION: Final = len(MIGRATIONS)
