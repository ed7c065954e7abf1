import { Type } from "@sinclair/typebox";

/**
 * A boolean in a query string. Clients send `true`/`false` or, like the official SDK's
 * cancel_on_disconnect, `1`/`0`; anything else is a 422.
 */
export const QueryBoolean = (options: { default?: boolean; description?: string } = {}) =>
  Type.Union([Type.Boolean(), Type.String({ pattern: "^(true|false|1|0|yes|no)$" })], {
    description: options.description,
    default: options.default,
  });

export function parseQueryBoolean(value: unknown, fallback = false): boolean {
  if (value === undefined || value === null || value === "") return fallback;
  if (typeof value === "boolean") return value;
  return value === "true" || value === "1" || value === "yes";
}
