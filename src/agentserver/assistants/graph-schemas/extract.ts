import { dirname } from "node:path";
import ts from "typescript";
import { GraphTypeReader, type GraphFields } from "./graph-types.ts";
import { SubgraphFinder } from "./subgraph-finder.ts";
import { TypeSchemaWriter, type JsonSchema } from "./type-schema.ts";

/** A graph of langgraph.json: where its module is and which export holds it. */
export interface GraphSource {
  graphId: string;
  file: string;
  exportName: string;
}

/** The schemas of one graph, named as the vendor's subgraph answers name them. */
export interface SchemaSet {
  state?: JsonSchema;
  input?: JsonSchema;
  output?: JsonSchema;
  config?: JsonSchema;
}

export interface Extraction {
  /** Per graph id: schemas by namespace, "" for the graph itself, `child|grandchild` below. */
  graphs: Record<string, Record<string, SchemaSet>>;
  /** Why a graph has no schemas (not a graph type, export not found, ...). */
  problems: Record<string, string>;
  /** Every file the compiler read: their contents decide whether a saved extraction still holds. */
  files: string[];
}

/**
 * Derives JSON Schemas of the project's graphs from their TypeScript types: one
 * program over all graph modules, then the checker is asked only about the graph
 * exports and their subgraphs (no full type check, no emit), which is what keeps this
 * in seconds. Synchronous and CPU-bound: the server runs it in a worker (run-worker.ts).
 */
export function extractGraphSchemas(sources: GraphSource[], root: string): Extraction {
  const program = ts.createProgram({ rootNames: [...new Set(sources.map((s) => s.file))], options: compilerOptions(root) });
  const checker = program.getTypeChecker();
  const reader = new GraphTypeReader(checker);
  const result: Extraction = { graphs: {}, problems: {}, files: program.getSourceFiles().map((f) => f.fileName) };
  for (const source of sources) {
    try {
      const schemas = extractOne(program, checker, reader, source);
      if (typeof schemas === "string") result.problems[source.graphId] = schemas;
      else result.graphs[source.graphId] = schemas;
    } catch (error) {
      result.problems[source.graphId] = `schema extraction failed: ${(error as Error).message}`;
    }
  }
  return result;
}

function extractOne(program: ts.Program, checker: ts.TypeChecker, reader: GraphTypeReader, source: GraphSource): Record<string, SchemaSet> | string {
  const file = program.getSourceFile(source.file);
  if (!file) return `${source.file} is not a TypeScript or JavaScript module the compiler could read`;
  const symbol = reader.exportSymbol(file, source.exportName);
  if (!symbol) return `${source.file} has no export "${source.exportName}" the compiler can see`;
  const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0] ?? file;
  const graph = reader.compiledGraph(checker.getTypeOfSymbolAtLocation(symbol, declaration), declaration);
  if (!graph) return `the type of "${source.exportName}" is not a LangGraph graph`;
  const schemas: Record<string, SchemaSet> = { "": write(checker, reader.schemaFields(graph, declaration), declaration) };
  for (const site of new SubgraphFinder(checker, reader).find(declaration)) {
    const key = site.namespace.join("|");
    schemas[key] ??= write(checker, reader.schemaFields(site.type, site.at), site.at);
  }
  return schemas;
}

function write(checker: ts.TypeChecker, fields: GraphFields, at: ts.Node): SchemaSet {
  const writer = new TypeSchemaWriter(checker, at);
  return {
    state: fields.state && writer.channels(fields.state),
    input: fields.input && writer.channels(fields.input),
    output: fields.output && writer.channels(fields.output),
    // No context declared: an empty object, as the vendor's dev server answers.
    config: writer.channels(fields.config ?? []),
  };
}

/**
 * The project's tsconfig.json (nearest to its root) where there is one, with what
 * extraction needs on top: strict null checks (to tell optional fields), JavaScript
 * graphs, `.ts` import specifiers, no emit, and no checking of libraries' own files.
 */
function compilerOptions(root: string): ts.CompilerOptions {
  let options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    esModuleInterop: true,
    strict: true,
  };
  const configPath = ts.findConfigFile(root, ts.sys.fileExists, "tsconfig.json");
  if (configPath) {
    const read = ts.readConfigFile(configPath, ts.sys.readFile);
    if (!read.error) options = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath)).options;
  }
  return {
    ...options,
    strictNullChecks: true,
    allowJs: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    skipLibCheck: true,
    incremental: false,
    composite: false,
  };
}
