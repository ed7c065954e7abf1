import { join } from "node:path";
import type { LanggraphConfig } from "../../graphs/langgraph-config.ts";
import { readSavedExtraction, saveExtraction } from "./cache-file.ts";
import type { Extraction, GraphSource, SchemaSet } from "./extract.ts";
import { extractInWorker } from "./run-worker.ts";

interface StaticSchemaOptions {
  /** The project's directory (langgraph.json's). */
  root: string;
  sources: GraphSource[];
  /** Longest an extraction may take; past it the graphs keep their run-time schemas only. */
  timeoutMs?: number;
  /** Where the extraction is saved; null saves nothing. Default: `<root>/.slipway/graph-schemas.json`. */
  cacheFile?: string | null;
  log?: { warn(obj: unknown, msg: string): void; info(obj: unknown, msg: string): void };
}

/** 30 s, as the vendor's default; SLIPWAY_SCHEMA_TIMEOUT_SECONDS, or the vendor's LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS. */
export function schemaTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.SLIPWAY_SCHEMA_TIMEOUT_SECONDS);
  if (Number.isFinite(seconds) && seconds > 0) return seconds * 1000;
  const ms = Number(env.LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS);
  return Number.isFinite(ms) && ms > 0 ? ms : 30_000;
}

/** The graphs of a langgraph.json, as the extractor takes them. */
export function graphSources(config: Pick<LanggraphConfig, "graphs">): GraphSource[] {
  return Object.entries(config.graphs)
    .filter(([, spec]) => spec.language !== "python")
    .map(([graphId, spec]) => ({ graphId, file: spec.path, exportName: spec.exportName }));
}

function defaultCacheFile(root: string): string {
  return join(root, ".slipway", "graph-schemas.json");
}

/**
 * Schemas the TypeScript compiler reads from a project's graph types, for graphs whose
 * schemas are not known at run time (Annotation, MessagesAnnotation, interfaces).
 * Nothing happens at start: the first request that needs them triggers one extraction
 * for every graph of the project, which later requests share. The result is saved
 * beside the project and read back by the next process while the files it came from
 * are unchanged; the build (`slipway agent --check`) makes it, so a deployed revision
 * answers its first request from the saved file. A failure or a timeout is logged
 * once, and the graphs keep their run-time schemas (see decision 0013).
 */
export class StaticGraphSchemas {
  private pending?: Promise<Extraction | undefined>;

  constructor(private readonly options: StaticSchemaOptions) {}

  /** The schemas of a graph by namespace ("" for the graph itself); undefined when there are none. */
  async of(graphId: string): Promise<Record<string, SchemaSet> | undefined> {
    return (await this.load())?.graphs[graphId];
  }

  /** The extraction: saved, or made now (once per process, however many ask). */
  load(): Promise<Extraction | undefined> {
    this.pending ??= this.extract();
    return this.pending;
  }

  private async extract(): Promise<Extraction | undefined> {
    const { sources, root, log } = this.options;
    if (!sources.length) return undefined;
    const cacheFile = this.options.cacheFile === undefined ? defaultCacheFile(root) : this.options.cacheFile;
    const saved = cacheFile ? readSavedExtraction(cacheFile, sources, root) : undefined;
    if (saved) return saved;
    const started = Date.now();
    let extraction: Extraction;
    try {
      extraction = await extractInWorker(sources, root, this.options.timeoutMs ?? schemaTimeoutMs());
    } catch (error) {
      log?.warn(
        { err: error },
        "graph schemas could not be read from the TypeScript types; graphs without zod schemas get the types of their run-time channels",
      );
      return undefined;
    }
    for (const [graphId, problem] of Object.entries(extraction.problems)) log?.warn({ graph_id: graphId }, `graph schemas: ${problem}`);
    log?.info({ ms: Date.now() - started, graphs: Object.keys(extraction.graphs).length }, "graph schemas read from the TypeScript types");
    if (cacheFile) {
      try {
        saveExtraction(cacheFile, sources, extraction, root);
      } catch (error) {
        // A read-only project directory: the next process extracts again.
        log?.warn({ err: error, file: cacheFile }, "graph schemas could not be saved");
      }
    }
    return extraction;
  }
}
