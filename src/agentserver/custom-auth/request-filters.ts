import type { FastifyRequest } from "fastify";
import type { AuthFilters } from "./filters.ts";

/**
 * Filters of custom auth that a route applies itself, because they narrow what its
 * storage call finds (the store's items). Set by the auth hook, read by the route.
 */
const byRequest = new WeakMap<FastifyRequest, AuthFilters>();

export function setRequestFilters(request: FastifyRequest, filters: AuthFilters | undefined): void {
  if (filters) byRequest.set(request, filters);
}

export function requestFilters(request: FastifyRequest): AuthFilters | undefined {
  return byRequest.get(request);
}
