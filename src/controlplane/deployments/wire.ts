import { Type, type SchemaOptions, type TSchema, type TUnsafe } from "@sinclair/typebox";
import { PageOffset } from "../../http/bounds.ts";
import { Detail, HTTPValidationError } from "../openapi.ts";

/**
 * Schema helpers shared by the deployment, revision and listener routes, in the vendor's
 * style: nullable = `anyOf [X, null]`, closed enums as plain `enum`, `{resources, offset}` pages.
 * (Validation itself is the control plane's validator, src/http/validator.ts.)
 */

export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) => Type.Union([schema, Type.Null()], options);

/** A closed string enum, emitted as `{"type":"string","enum":[...]}` like the vendor's. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: "string", enum: [...values] });
}

export const Uuid = (options: SchemaOptions = {}) => Type.String({ format: "uuid", ...options });
export const DateTime = (options: SchemaOptions = {}) => Type.String({ format: "date-time", ...options });

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** Response schemas for the error statuses a route can answer: `{detail}` or, for 422, HTTPValidationError. */
export function errorResponses(...statuses: (400 | 401 | 403 | 404 | 409 | 413 | 422)[]): Record<number, TSchema> {
  const out: Record<number, TSchema> = {};
  for (const status of statuses) out[status] = status === 422 ? HTTPValidationError : Detail;
  return out;
}

/** `limit` / `offset` query parameters of every list (vendor: 1..100, default 20; optional on the wire). */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: "Maximum number of resources to return." })),
  offset: Type.Optional(PageOffset({ description: "Pagination offset. Pass this value to subsequent requests to fetch the next page of resources." })),
};

/** The page a query asks for (the validator fills the defaults; these hold for direct callers). */
export function pageOf(query: { limit?: number; offset?: number }): { limit: number; offset: number } {
  return { limit: query.limit ?? 20, offset: query.offset ?? 0 };
}

/** The `{resources, offset}` envelope; `offset` is where the next page starts. */
export function PageOf<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    {
      resources: Type.Array(item),
      offset: Type.Integer({ description: "Pagination offset. Pass this value to subsequent requests to fetch the next page." }),
    },
    { title },
  );
}
