-- Long-term memory: the items of the BaseStore graphs use and of the /store API.

CREATE TABLE store_items (
  -- The namespace labels joined with "." (labels may not contain "."). With the "C"
  -- collation text compares byte by byte, so the items under prefix p are
  -- `namespace_path = p` plus the range [p || '.', p || '/') ('/' follows '.'),
  -- which the primary key's btree answers without LIKE and its escaping.
  namespace_path text COLLATE "C" NOT NULL,
  key text NOT NULL,
  value jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- Minutes an item lives after its last write (or refreshing read); null: forever.
  ttl_minutes double precision,
  expires_at timestamptz,
  PRIMARY KEY (namespace_path, key)
);
-- Listing mode returns the most recently updated items first.
CREATE INDEX store_items_updated_at ON store_items (updated_at DESC);
-- The sweeper deletes expired rows; most rows never expire.
CREATE INDEX store_items_expires_at ON store_items (expires_at) WHERE expires_at IS NOT NULL;
