import { Type, type IntegerOptions, type NumberOptions } from "@sinclair/typebox";

/**
 * Bounded numbers for request schemas. JSON Schema calls `99999999999999999999` and
 * `1e20` integers, and without a bound they passed validation for PostgreSQL to refuse
 * with a 500 (`out of range for type bigint`, `interval out of range`).
 */

/** PostgreSQL's `integer`: fits every column and parameter a count or version meets, and exact in a JS number. */
const MAX_SQL_INTEGER = 2_147_483_647;

/** The longest delay or lifetime a request may ask for: 100 years, far inside what timestamps and Dates hold. */
export const MAX_DURATION_SECONDS = 100 * 365.25 * 24 * 60 * 60;

/** An integer PostgreSQL's `integer` holds (a version, a depth). */
export const SqlInteger = (options: IntegerOptions = {}) => Type.Integer({ maximum: MAX_SQL_INTEGER, ...options });

/** `offset` of a list: 0 to MAX_SQL_INTEGER, default 0. */
export const PageOffset = (options: IntegerOptions = {}) => Type.Integer({ minimum: 0, default: 0, ...options, maximum: MAX_SQL_INTEGER });

/** `limit` of a list: 1 to its own cap (`maximum`), or to MAX_SQL_INTEGER when it has none. */
export const PageLimit = (options: IntegerOptions & { default: number }) => Type.Integer({ minimum: 1, maximum: MAX_SQL_INTEGER, ...options });

/** A duration in `unit`s (seconds or minutes), at most MAX_DURATION_SECONDS. */
export const Duration = (unit: "seconds" | "minutes", options: NumberOptions = {}) =>
  Type.Number({ maximum: unit === "seconds" ? MAX_DURATION_SECONDS : MAX_DURATION_SECONDS / 60, ...options });
