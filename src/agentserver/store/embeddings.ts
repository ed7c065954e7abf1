import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { StoreIndexSection } from "../graphs/config-sections.ts";
import { importProjectExport } from "../graphs/project-module.ts";

/** What the store needs of an embeddings model: LangChain's `Embeddings` interface. */
export interface EmbeddingsLike {
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}

/**
 * Providers of `"provider:model"` strings, as LangChain names them: the package the
 * project must depend on and the class it exports. The vendor's server resolves the same
 * strings through LangChain's `init_embeddings`.
 */
const PROVIDERS: Record<string, { pkg: string; className: string }> = {
  openai: { pkg: "@langchain/openai", className: "OpenAIEmbeddings" },
  azure_openai: { pkg: "@langchain/openai", className: "AzureOpenAIEmbeddings" },
  cohere: { pkg: "@langchain/cohere", className: "CohereEmbeddings" },
  mistralai: { pkg: "@langchain/mistralai", className: "MistralAIEmbeddings" },
  ollama: { pkg: "@langchain/ollama", className: "OllamaEmbeddings" },
  google_genai: { pkg: "@langchain/google-genai", className: "GoogleGenerativeAIEmbeddings" },
  google_vertexai: { pkg: "@langchain/google-vertexai", className: "VertexAIEmbeddings" },
  bedrock: { pkg: "@langchain/aws", className: "BedrockEmbeddings" },
};

/**
 * The embeddings of `store.index.embed`: a module of the project that exports an
 * `Embeddings` object, or a function of texts to vectors; or a provider string, built
 * from the provider's LangChain package found in the project (its API key comes from the
 * environment, as the package reads it). Vectors are checked against `dims` when used.
 */
export async function loadEmbeddings(index: StoreIndexSection, projectRoot: string): Promise<EmbeddingsLike> {
  if ("module" in index.embed) {
    const value = await importProjectExport(index.embed.module);
    const embeddings = asEmbeddings(value);
    if (!embeddings) {
      throw new Error(
        `store.index.embed: the export "${index.embed.module.exportName}" of ${index.embed.module.file} is neither an Embeddings object (embedDocuments, embedQuery) nor a function of texts to vectors`,
      );
    }
    return embeddings;
  }
  const { provider, model } = index.embed;
  const known = PROVIDERS[provider];
  if (!known) {
    throw new Error(`store.index.embed: unknown provider "${provider}" (known: ${Object.keys(PROVIDERS).join(", ")}); or name a module exporting embeddings`);
  }
  const entry = resolveFromProject(known.pkg, projectRoot);
  if (!entry) {
    throw new Error(`store.index.embed: "${provider}:${model}" needs the package ${known.pkg} in the project (npm install ${known.pkg})`);
  }
  const Class = (await import(pathToFileURL(entry).href))[known.className] as (new (fields: Record<string, unknown>) => EmbeddingsLike) | undefined;
  if (typeof Class !== "function") throw new Error(`store.index.embed: ${known.pkg} exports no ${known.className}`);
  return new Class({ model });
}

/** An Embeddings object as it is, or a function `(texts) => vectors` made into one. */
function asEmbeddings(value: unknown): EmbeddingsLike | undefined {
  if (typeof value === "function") {
    const embed = value as (texts: string[]) => Promise<number[][]> | number[][];
    return {
      embedDocuments: async (texts) => embed(texts),
      embedQuery: async (text) => (await embed([text]))[0]!,
    };
  }
  const candidate = value as Partial<EmbeddingsLike> | null;
  if (candidate && typeof candidate.embedDocuments === "function" && typeof candidate.embedQuery === "function") {
    return candidate as EmbeddingsLike;
  }
  return undefined;
}

function resolveFromProject(pkg: string, root: string): string | undefined {
  const anchor = existsSync(join(root, "package.json")) ? join(root, "package.json") : join(root, "noop.js");
  try {
    return createRequire(anchor).resolve(pkg);
  } catch {
    return undefined;
  }
}
