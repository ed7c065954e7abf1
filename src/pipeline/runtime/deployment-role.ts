import { randomBytes } from "node:crypto";
import { openSecret, sealSecret } from "../../auth/secret-box.ts";
import type { PipelineDeps } from "../context.ts";
import * as repo from "./repository.ts";

/**
 * A deployment's own PostgreSQL role (docs/decisions/0030): it owns the deployment's
 * schema and what is in it, and has no right on any other schema: the control plane's
 * tables and other deployments' data stay out of its reach, and the control plane's own
 * credentials never reach an agent process. Returns the URL the agent processes connect
 * with: a login of the current generation with a random password.
 *
 * Generation 0 logs in as the owner itself. A rotation (`rotate`) starts the next
 * generation: a new password, sealed, on a login role of its own (`<owner>_1`, then
 * `<owner>_0`, in turn), a member of the owner whose sessions begin as the owner
 * (`ALTER ROLE ... SET role`), so what they create is the owner's as before. The
 * processes still serving keep their login until they stop (PostgreSQL has one password
 * per role: changing the owner's would refuse their next connection); then
 * `retireStaleLogins` takes every other login away.
 *
 * The control plane's user needs CREATEROLE and must be able to hand objects over to the
 * role (a superuser, or a member of it). Names and password are ours (hex, base64url),
 * never user input: they are written into the DDL, which takes no parameters.
 */
export async function deploymentRoleUrl(deps: PipelineDeps, deploymentId: string, schema: string, options: { rotate?: boolean } = {}): Promise<string> {
  const owner = roleOf(deploymentId);
  const context = `pg-role:${deploymentId}`;
  const newPassword = () => sealSecret(deps.secretsKey, randomBytes(24).toString("base64url"), context);
  const now = deps.now();
  let stored = await repo.deploymentRole(deps.db, { deploymentId, role: owner, passwordSealed: newPassword(), now });
  if (options.rotate) {
    const generation = stored.generation + 1;
    stored = await repo.rotateDeploymentRole(deps.db, { deploymentId, role: loginRoleOf(deploymentId, generation), passwordSealed: newPassword(), generation });
  }
  const password = openSecret(deps.secretsKey, stored.password_sealed, context);
  const login = stored.role;
  if (!/^[A-Za-z0-9_-]+$/.test(password) || !/^[a-z0-9_]+$/.test(owner + login + schema)) throw new Error("unexpected role name or password");
  const ownerLogs = login === owner;
  await deps.db.query(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${owner}') THEN
        CREATE ROLE ${owner} ${ownerLogs ? `LOGIN PASSWORD '${password}'` : "NOLOGIN"} NOINHERIT;
      ELSIF ${ownerLogs} THEN
        ALTER ROLE ${owner} LOGIN PASSWORD '${password}';
      END IF;
      IF NOT ${ownerLogs} THEN
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${login}') THEN
          CREATE ROLE ${login} LOGIN NOINHERIT PASSWORD '${password}' IN ROLE ${owner};
        ELSE
          ALTER ROLE ${login} LOGIN PASSWORD '${password}';
          GRANT ${owner} TO ${login};
        END IF;
        ALTER ROLE ${login} SET role = '${owner}';
      END IF;
    EXCEPTION WHEN duplicate_object THEN NULL; -- another node created it at the same moment, with the same password
    END $$`);
  await handOverSchema(deps, schema, owner);
  const url = new URL(deps.databaseUrl!);
  url.username = login;
  url.password = password;
  return url.toString();
}

/**
 * Takes the login away from every role of the deployment but the current generation's
 * (no password, NOLOGIN) and ends their sessions: called once the processes that used
 * an earlier login have stopped, so that an old credential opens nothing any more.
 */
export async function retireStaleLogins(deps: PipelineDeps, deploymentId: string): Promise<void> {
  const current = await repo.deploymentLoginRole(deps.db, deploymentId);
  if (!current) return;
  const stale = loginRolesOf(deploymentId).filter((role) => role !== current);
  if (!stale.every((role) => /^[a-z0-9_]+$/.test(role))) throw new Error("unexpected role name");
  const list = stale.map((role) => `'${role}'`).join(", ");
  await deps.db.query(`DO $$
    DECLARE
      item record;
    BEGIN
      FOR item IN SELECT rolname FROM pg_roles WHERE rolname IN (${list}) AND (rolcanlogin OR rolpassword IS NOT NULL) LOOP
        EXECUTE format('ALTER ROLE %I NOLOGIN PASSWORD NULL', item.rolname);
      END LOOP;
      BEGIN
        PERFORM pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename IN (${list});
      EXCEPTION WHEN insufficient_privilege THEN NULL; -- not a superuser: the sessions end with their processes
      END;
    END $$`);
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
  // The logins first: they are members of the owner.
  for (const role of [...loginRolesOf(deploymentId)].reverse()) {
    await deps.db.query(`DO $$ BEGIN
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${role}') THEN
          DROP OWNED BY ${role};
          DROP ROLE ${role};
        END IF;
      END $$`);
  }
}

export function roleOf(deploymentId: string): string {
  return `slipway_d_${deploymentId.replace(/-/g, "").toLowerCase()}`;
}

/** The role a generation's processes log in as: the owner at generation 0, then `<owner>_1`, `<owner>_0` in turn. */
function loginRoleOf(deploymentId: string, generation: number): string {
  return generation === 0 ? roleOf(deploymentId) : `${roleOf(deploymentId)}_${generation % 2}`;
}

/** Every role a deployment's processes may log in as (the database relay lets these through, and no other). */
export function loginRolesOf(deploymentId: string): string[] {
  const owner = roleOf(deploymentId);
  return [owner, `${owner}_0`, `${owner}_1`];
}
