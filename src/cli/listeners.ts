import { Command, type Command as CommandType } from "commander";
import type { Listener, ListenerPatchRequest } from "../controlplane/listeners/schemas.ts";
import { sessionAction } from "./support/action.ts";
import { connectionOptions } from "./support/connection.ts";
import { count, defined } from "./support/deployment-body.ts";
import { UsageError } from "./support/exit.ts";
import { note, printFields, printJson, printTable } from "./support/output.ts";
import { collect } from "./support/secrets.ts";

/** `slipway listeners list|create|get|update|delete`: the compute a self-hosted organization registers. */
export function registerListenersCommand(program: CommandType): void {
  const group = new Command("listeners").description("List, register, show, change and remove listeners (compute infrastructure)");
  const sub = (name: string) => connectionOptions(new Command(name)).option("--json", "print JSON");

  group.addCommand(
    sub("list")
      .description("List the workspace's listeners")
      .option("--limit <n>", "at most this many", "100")
      .option("--offset <n>", "skip this many", "0")
      .action(
        sessionAction("listeners list", async ({ client, flags, json }) => {
          const page = await client.listeners.list({ limit: count(flags.limit, "--limit"), offset: count(flags.offset, "--offset") });
          if (json) return printJson(page.resources);
          printTable(
            ["ID", "COMPUTE", "VERSION", "NAMESPACES", "CREATED"],
            page.resources.map((l) => [l.id, `${l.compute_type}:${l.compute_id}`, l.version, l.compute_config.k8s_namespaces?.join(",") ?? "", l.created_at]),
          );
        }),
      ),
  );

  group.addCommand(
    sub("create")
      .description("Register a listener")
      .requiredOption("--compute-id <id>", "the cluster's name; unique in the workspace")
      .option("--namespace <name>", "a Kubernetes namespace it serves (repeatable)", collect)
      .option("--listener-version <version>", "the listener's version")
      .action(
        sessionAction("listeners create", async ({ client, flags, json }) => {
          const listener = await client.listeners.create({
            compute_type: "k8s",
            compute_id: flags.computeId,
            compute_config: { k8s_namespaces: flags.namespace ?? [] },
            ...(flags.listenerVersion !== undefined ? { version: flags.listenerVersion } : {}),
          });
          show(listener, json);
        }),
      ),
  );

  group.addCommand(
    sub("get")
      .description("Show one listener")
      .argument("<listener-id>")
      .action(sessionAction("listeners get", async ({ client, json }, id: string) => show(await client.listeners.get(id), json))),
  );

  group.addCommand(
    sub("update")
      .description("Change a listener's namespaces or version")
      .argument("<listener-id>")
      .option("--namespace <name>", "a Kubernetes namespace it serves (repeatable; replaces the list)", collect)
      .option("--no-namespaces", "serve no namespace")
      .option("--listener-version <version>", "the listener's version")
      .action(
        sessionAction("listeners update", async ({ client, flags, json }, id: string) => {
          // commander sets `namespaces` to true unless --no-namespaces was given.
          const namespaces: string[] | undefined = flags.namespaces === false ? [] : flags.namespace;
          const body: ListenerPatchRequest = defined({
            version: flags.listenerVersion,
            compute_config: namespaces ? { k8s_namespaces: namespaces } : undefined,
          });
          if (Object.keys(body).length === 0) throw new UsageError("nothing to change: give --namespace, --no-namespaces or --listener-version");
          show(await client.listeners.update(id, body), json);
        }),
      ),
  );

  group.addCommand(
    sub("delete")
      .description("Remove a listener")
      .argument("<listener-id>")
      .action(
        sessionAction("listeners delete", async ({ client, json }, id: string) => {
          await client.listeners.delete(id);
          if (json) printJson({ deleted_listener_id: id });
          else note(`Deleted listener ${id}.`);
        }),
      ),
  );

  program.addCommand(group);
}

function show(listener: Listener, json: boolean): void {
  if (json) return void printJson(listener);
  printFields([
    ["id", listener.id],
    ["compute", `${listener.compute_type}:${listener.compute_id}`],
    ["version", listener.version],
    ["namespaces", listener.compute_config.k8s_namespaces?.join(", ")],
    ["created", listener.created_at],
    ["updated", listener.updated_at],
  ]);
}
