import { randomBytes } from "node:crypto";
import { openSecret, sealSecret } from "../../auth/secret-box.ts";
import type { PipelineDeps } from "../context.ts";
import * as repo from "./repository.ts";

/**
 * A deployment's own PostgreSQL role (docs/decisions/0030): it logs in with a random
 * password, owns the deployment's schema and what is in it, and has no right on any
 * other schema: the control plane's tables and other deployments' data stay out of its
 * reach, and the control plane's own credentials never reach an agent process. Returns
 * the URL the agent processes connect with.
 *
 * The control plane's user needs CREATEROLE and must be able to hand objects over to the
 * role (a superuser, or a member of it). Names and password are ours (hex, base64url),
 * never user input: they are written into the DDL, which takes no parameters.
 */
export async function deploymentRoleUrl(deps: PipelineDeps, deploymentId: string, schema: string): Promise<string> {
  const role = roleOf(deploymentId);
  const context = `pg-role:${deploymentId}`;
  const stored = await repo.deploymentRole(deps.db, {
    deploymentId,
    role,
    passwordSealed: sealSecret(deps.secretsKey, randomBytes(24).toString("base64url"), context),
    now: deps.now(),
  });
  const password = openSecret(deps.secretsKey, stored.password_sealed, context);
  if (!/^[A-Za-z0-9_-]+$/.test(password) || !/^[a-z0-9_]+$/.test(role + schema)) throw new Error("unexpected role name or password");
  await deps.db.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN
        CREATE ROLE ${role} LOGIN NOINHERIT PASSWORD '${password}';
      ELSE
        ALTER ROLE ${role} LOGIN PASSWORD '${password}';
      END IF;
    EXCEPTION WHEN duplicate_object THEN NULL; -- another node created it at the same moment, with the same password
    END $$`);
  await handOverSchema(deps, schema, role);
  const url = new URL(deps.databaseUrl!);
  url.username = role;
  url.password = password;
  return url.toString();
}

/**
 * The schema, and every table, sequence, view, function and type in it, owned by the
 * role (a deployment created before roles existed had them owned by the control plane).
 */
async function handOverSchema(deps: PipelineDeps, schema: string, role: string): Promise<void> {
  await deps.db.query(`DO $$
    DECLARE
      item record;
    BEGIN
      BEGIN
        CREATE SCHEMA IF NOT EXISTS ${schema} AUTHORIZATION ${role};
      EXCEPTION WHEN unique_violation OR duplicate_schema THEN NULL;
      END;
      IF (SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = '${schema}') <> '${role}' THEN
        EXECUTE format('ALTER SCHEMA %I OWNER TO %I', '${schema}', '${role}');
      END IF;
      FOR item IN
        SELECT c.oid::regclass AS name, CASE WHEN c.relkind = 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = '${schema}' AND c.relkind IN ('r', 'p', 'v', 'm', 'S') AND c.relowner <> '${role}'::regrole
           AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i') AND c.relkind = 'S')
      LOOP
        EXECUTE format('ALTER %s %s OWNER TO %I', item.kind, item.name, '${role}');
      END LOOP;
      FOR item IN
        SELECT p.oid::regprocedure AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = '${schema}' AND p.proowner <> '${role}'::regrole
      LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO %I', item.name, '${role}');
      END LOOP;
      FOR item IN
        SELECT t.oid::regtype AS name FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
         WHERE n.nspname = '${schema}' AND t.typowner <> '${role}'::regrole AND t.typtype IN ('e', 'd', 'c')
           AND (t.typrelid = 0 OR (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c')
      LOOP
        EXECUTE format('ALTER TYPE %s OWNER TO %I', item.name, '${role}');
      END LOOP;
    END $$`);
}

/** Drops the role (its schema was dropped first, with everything it owned). */
export async function dropDeploymentRole(deps: PipelineDeps, deploymentId: string): Promise<void> {
  const role = roleOf(deploymentId);
  await deps.db.query(`DO $$ BEGIN
      IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN
        DROP OWNED BY ${role};
        DROP ROLE ${role};
      END IF;
    END $$`);
}

export function roleOf(deploymentId: string): string {
  return `slipway_d_${deploymentId.replace(/-/g, "").toLowerCase()}`;
}
