import { Command, type Command as CommandType } from "commander";
import type { Database } from "../storage/database.ts";
import type { TenancyService } from "../controlplane/tenancy/service.ts";

/**
 * `slipway admin ...`: offline tenancy tasks, run against the database directly
 * (no server needed).
 *
 * Beside a running `slipway up`: with --database-url (a PostgreSQL server) yes, any
 * time. With the embedded database no: one PGlite directory admits one process, so
 * these commands refuse while `slipway up` holds that --data-dir (stop it first).
 */
export function registerAdminCommand(program: CommandType): void {
  const admin = new Command("admin").description("Administrative tasks: organizations, workspaces, API keys");

  admin.addCommand(
    storageOptions(new Command("bootstrap"))
      .description("Create an organization with one workspace and a new API key; prints them once")
      .option("--org-name <name>", "organization name", "Default")
      .option("--plan <plan>", "free | plus | enterprise | self_hosted_enterprise", "self_hosted_enterprise")
      .option("--workspace-name <name>", "name of its workspace", "Default")
      .option("--key-scope <scope>", "organization (needs X-Tenant-Id) | workspace", "organization")
      .action((flags) =>
        withTenancy(flags, async (tenancy) => {
          if (flags.keyScope !== "organization" && flags.keyScope !== "workspace") {
            throw new Error("--key-scope must be organization or workspace");
          }
          const result = await tenancy.bootstrap({ orgName: flags.orgName, plan: flags.plan, workspaceName: flags.workspaceName, keyScope: flags.keyScope });
          const { organization_id, workspace_id, api_key } = result;
          print(flags, { organization_id, workspace_id, api_key }, [
            `organization_id: ${organization_id}`,
            `workspace_id:    ${workspace_id}`,
            `api_key:         ${api_key}`,
            "The key is shown only this once: store it now.",
          ]);
        }),
      ),
  );

  admin.addCommand(
    storageOptions(new Command("create-workspace"))
      .description("Add a workspace to an organization")
      .requiredOption("--organization-id <id>", "organization id")
      .requiredOption("--name <name>", "workspace name")
      .action((flags) =>
        withTenancy(flags, async (tenancy) => {
          const created = await tenancy.createWorkspace(flags.organizationId, flags.name);
          print(flags, created, [`workspace_id: ${created.workspace_id}`]);
        }),
      ),
  );

  admin.addCommand(
    storageOptions(new Command("create-key"))
      .description("Create an API key for an organization, or for one of its workspaces with --workspace-id")
      .requiredOption("--organization-id <id>", "organization id")
      .option("--workspace-id <id>", "limit the key to this workspace")
      .option("--description <text>", "what the key is for", "")
      .action((flags) =>
        withTenancy(flags, async (tenancy) => {
          const key = await tenancy.createApiKey(flags.organizationId, flags.workspaceId ?? null, flags.description);
          print(flags, key, [`api_key_id: ${key.api_key_id}`, `api_key:    ${key.api_key}`, "The key is shown only this once: store it now."]);
        }),
      ),
  );

  admin.addCommand(
    storageOptions(new Command("list-keys"))
      .description("List an organization's API keys (prefixes only, never the keys)")
      .requiredOption("--organization-id <id>", "organization id")
      .action((flags) =>
        withTenancy(flags, async (tenancy) => {
          const keys = await tenancy.listApiKeys(flags.organizationId);
          print(
            flags,
            keys,
            keys.map((k) => `${k.id}  ${k.prefix}…  ${k.workspace_id ?? "(organization)"}  ${k.revoked ? "revoked" : "live"}  ${k.description}`),
          );
        }),
      ),
  );

  admin.addCommand(
    storageOptions(new Command("revoke-key"))
      .description("Revoke an API key by its id or prefix (slw_<16 hex>)")
      .argument("<key>", "key id or prefix")
      .action((key: string, flags) =>
        withTenancy(flags, async (tenancy) => {
          const revoked = await tenancy.revokeApiKey(key);
          if (!revoked) throw new Error("no live API key matches");
          print(flags, { revoked: true }, ["revoked"]);
        }),
      ),
  );

  program.addCommand(admin);
}

interface StorageFlags {
  dataDir?: string;
  databaseUrl?: string;
  json?: boolean;
}

function storageOptions(command: Command): Command {
  return command
    .option("--data-dir <dir>", "embedded database directory of `slipway up` (env SLIPWAY_DATA_DIR)")
    .option("--database-url <url>", "PostgreSQL server (env SLIPWAY_DATABASE_URL)")
    .option("--json", "print JSON only");
}

function print(flags: StorageFlags, value: unknown, lines: string[]): void {
  console.log(flags.json ? JSON.stringify(value) : lines.join("\n"));
}

async function withTenancy(flags: StorageFlags, work: (tenancy: TenancyService) => Promise<void>): Promise<void> {
  let db: Database | undefined;
  let release: () => void = () => {};
  try {
    const { randomUUID } = await import("node:crypto");
    const { controlDatabaseOptions, resolveStorageConfig, lockDataDir } = await import("../config/controlplane.ts");
    const { openDatabase } = await import("../storage/open.ts");
    const { TenancyService } = await import("../controlplane/tenancy/service.ts");
    const config = resolveStorageConfig(flags);
    if (!config.databaseUrl) release = lockDataDir(config.dataDir);
    db = await openDatabase(controlDatabaseOptions(config));
    await work(new TenancyService({ db, now: () => new Date(), newId: () => randomUUID() }));
  } catch (error) {
    console.error(`slipway admin: ${(error as Error).message}`);
    process.exitCode = 1;
  } finally {
    await db?.close().catch(() => undefined);
    release();
  }
}
