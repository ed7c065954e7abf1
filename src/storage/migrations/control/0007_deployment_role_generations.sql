-- Rotating a deployment's PostgreSQL credential (docs/decisions/0030): each rotation is a
-- new generation. The role that owns the deployment's schema stays; its processes log in
-- as a login role of that generation (the owner itself at generation 0, then two login
-- roles in turn), so that the processes still serving keep theirs while the new ones
-- start, and the previous login is disabled once they have stopped.
ALTER TABLE deployment_roles ADD COLUMN generation integer NOT NULL DEFAULT 0;
