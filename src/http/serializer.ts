import { createRequire } from "node:module";
import type { SerializerSelector } from "@fastify/fast-json-stringify-compiler";

type SerializerFactory = ReturnType<typeof SerializerSelector>;

const require = createRequire(import.meta.url);

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled at the first
 * response that needs it instead of when the route is registered: compiling them all
 * took a noticeable part of every agent process's start, most for routes never called.
 * The compiler itself (and the Ajv it loads) is loaded then too, not by an idle process
 * (decision 0054).
 */
export function lazySerializers(): SerializerFactory {
  let eager: SerializerFactory | undefined;
  return (externalSchemas, options) => {
    let compile: ReturnType<SerializerFactory> | undefined;
    return (route) => {
      let serialize: ((doc: unknown) => string) | undefined;
      return (doc) => {
        eager ??= (require("@fastify/fast-json-stringify-compiler") as { SerializerSelector: typeof SerializerSelector }).SerializerSelector();
        compile ??= eager(externalSchemas, options);
        return (serialize ??= compile(route))(doc);
      };
    };
  };
}
