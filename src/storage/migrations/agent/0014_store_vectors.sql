-- Semantic search of the store (langgraph.json store.index): one embedding per item and
-- indexed field ("$" for the whole value, "text", "tags.0", ...).

CREATE TABLE store_vectors (
  namespace_path text COLLATE "C" NOT NULL,
  key text NOT NULL,
  field_name text NOT NULL,
  -- A plain array, not pgvector's type: the embedded database has no pgvector, and
  -- where a server has it, real[] casts to vector for its distance operator.
  embedding real[] NOT NULL,
  -- |embedding|, so that a search computes one dot product per row, not three sums.
  norm double precision NOT NULL,
  PRIMARY KEY (namespace_path, key, field_name),
  -- An item's vectors go with it: deleted, expired and swept, or overwritten.
  FOREIGN KEY (namespace_path, key) REFERENCES store_items (namespace_path, key) ON DELETE CASCADE
);
