-- With a PostgreSQL server, each deployment's agent processes log in as a role of its own
-- that owns the deployment's schema and nothing else (docs/decisions/0030). Its password
-- is random, sealed with the secrets key like deployment secrets; deleting the row and
-- restarting the deployment's processes rotates it.
CREATE TABLE deployment_roles (
  deployment_id uuid PRIMARY KEY REFERENCES deployments (id) ON DELETE CASCADE,
  role text NOT NULL,
  password_sealed text NOT NULL,
  created_at timestamptz NOT NULL
);
