import { Type } from "@sinclair/typebox";

/**
 * Schema helpers that validate the way pydantic reports: one error per bad field.
 * TypeBox's `Union([Literal, ...])` and `Union([X, Null])` compile to `anyOf`, which Ajv
 * reports as one error per branch; these compile to `enum` and type arrays instead.
 *
 * @example
 *   deployment_type: StringEnum(["dev", "prod"]),          // 422 "Input should be 'dev', 'prod'"
 *   custom_url: Type.Optional(NullableString({ maxLength: 2048 })),
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}

export function NullableStringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) {
  return Type.Unsafe<T[number] | null>({ type: ["string", "null"], enum: [...values, null], ...options });
}

export function NullableString(options: Record<string, unknown> = {}) {
  return Type.Unsafe<string | null>({ type: ["string", "null"], ...options });
}

export function NullableBoolean(options: Record<string, unknown> = {}) {
  return Type.Unsafe<boolean | null>({ type: ["boolean", "null"], ...options });
}
