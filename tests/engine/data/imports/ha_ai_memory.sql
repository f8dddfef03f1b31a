-- The schema of AI Long Term Memory (Riscue/ha-ai-memory) after its v0 -> v1
-- migration (custom_components/ai_memory/memory/migration.py), with rows as
-- its memory manager writes them (created_at: datetime.now().isoformat()).
CREATE TABLE _meta (key TEXT PRIMARY KEY, value TEXT);
INSERT INTO _meta VALUES ('db_version', '1');
CREATE TABLE memories (
    id TEXT PRIMARY KEY,
    content TEXT,
    embedding TEXT,
    scope TEXT,
    agent_id TEXT,
    created_at TEXT,
    summary TEXT,
    wing TEXT DEFAULT 'general',
    room TEXT DEFAULT 'general',
    layer INTEGER DEFAULT 2,
    updated_at TEXT,
    accessed_at TEXT,
    access_count INTEGER DEFAULT 0
);
INSERT INTO memories (id, content, embedding, scope, agent_id, created_at, wing, room)
VALUES
  ('7f1c', 'The wifi guest network is called Garden', '[]', 'common', NULL, '2025-05-01T18:22:10.512000', 'general', 'general'),
  ('8a2d', 'Prefers short answers', '[0.1, 0.2]', 'private', 'conversation.ollama', '2025-05-02T07:01:00', 'home', 'kitchen'),
  ('9b3e', 'Calls the cat Miso', '[]', 'common', 'conversation.ollama', '2025-05-03T12:00:00', 'general', 'general');
