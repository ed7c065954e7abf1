import { loadedCheckpointPackage } from "../checkpointer/checkpoint-package.ts";
import { invalidField } from "../../http/errors.ts";
import type { EmbeddingsLike } from "./embeddings.ts";
import type { FieldVector, VectorSupport } from "./repository.ts";

/** `store.index` as the store uses it: the model, its dimensions, the fields to embed. */
export interface SemanticIndex {
  dims: number;
  embeddings: EmbeddingsLike;
  /** Paths of a value to embed ("$" is the whole value), unless a put names its own. */
  fields: string[];
  support: VectorSupport;
}

interface TextToEmbed {
  field: string;
  text: string;
}

/**
 * The texts of a value to embed, one per field path; a path that matches several values
 * ("tags[*]") yields `tags[*].0`, `tags[*].1`, ... as LangGraph's own stores name them.
 * Called by the store's `batch`, once the checkpoint package is loaded.
 */
export function textsOf(value: Record<string, unknown>, paths: string[]): TextToEmbed[] {
  const { getTextAtPath } = loadedCheckpointPackage();
  const out: TextToEmbed[] = [];
  for (const path of paths) {
    const texts = getTextAtPath(value, path);
    if (texts.length === 1) out.push({ field: path, text: texts[0]! });
    else {
      texts.forEach((text, i) => {
        out.push({ field: `${path}.${i}`, text });
      });
    }
  }
  return out;
}

/**
 * Embeds the texts of several puts in one call to the model (before any transaction
 * opens: a model call can take seconds) and checks every vector it returns.
 */
export async function embedAll(index: SemanticIndex, texts: TextToEmbed[][]): Promise<FieldVector[][]> {
  const flat = texts.flat();
  if (flat.length === 0) return texts.map(() => []);
  const vectors = await index.embeddings.embedDocuments(flat.map((t) => t.text));
  if (!Array.isArray(vectors) || vectors.length !== flat.length) {
    throw new Error(`store.index.embed: the model returned ${Array.isArray(vectors) ? vectors.length : "no"} vectors for ${flat.length} texts`);
  }
  let next = 0;
  return texts.map((group) => group.map(({ field }) => ({ field, vector: checkVector(index, vectors[next++]) })));
}

export async function embedQuery(index: SemanticIndex, query: string): Promise<number[]> {
  return checkVector(index, await index.embeddings.embedQuery(query));
}

function checkVector(index: SemanticIndex, vector: unknown): number[] {
  if (!Array.isArray(vector) || !vector.every((x) => typeof x === "number" && Number.isFinite(x))) {
    throw new Error("store.index.embed: the model returned something other than a list of finite numbers");
  }
  if (vector.length !== index.dims) {
    throw new Error(`store.index.embed: the model returned vectors of ${vector.length} dimensions; store.index.dims says ${index.dims}`);
  }
  return vector as number[];
}

/** A put's `index`: false embeds nothing, a list names its own fields, absent means the configured ones. */
export function fieldsOfPut(index: SemanticIndex | undefined, requested: false | string[] | null | undefined): string[] {
  if (requested === false) return [];
  if (!index) {
    if (Array.isArray(requested) && requested.length > 0) {
      throw invalidField(["index"], "indexing fields needs store.index in langgraph.json (an embeddings model); send false or null");
    }
    return [];
  }
  return Array.isArray(requested) ? requested : index.fields;
}
