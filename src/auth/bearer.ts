import { readFileSync } from "node:fs";
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";

/**
 * The third credential scheme of the control plane: `Authorization: Bearer <JWT>`,
 * issued by an identity provider the operator trusts (Keycloak, Auth0, Dex, a CI
 * system's OIDC tokens, or a script holding a shared secret).
 *
 * A token is accepted when
 * - its signature checks against the configured key source: a JWKS URL (fetched and
 *   cached, refreshed when an unknown `kid` appears), a JWKS file, or an HMAC shared secret;
 * - `iss` equals the configured issuer and `aud` contains the configured audience;
 * - it is not expired (`exp` is required) and not used before `nbf`;
 * - it carries `sub` and `org_id` (the organization it acts for, a uuid), and
 *   optionally `workspace_id` (a uuid) to confine it to one workspace.
 *
 * Tenancy then follows the API-key rules: a token with `workspace_id` behaves like a
 * workspace key, one without like an organization key (X-Tenant-Id required).
 */
export interface BearerConfig {
  issuer: string;
  /** Default "slipway". */
  audience?: string;
  jwksUrl?: string;
  jwksFile?: string;
  /** HMAC (HS256/384/512) shared secret, at least 32 characters. */
  secret?: string;
  /** Allowed clock skew for exp/nbf, seconds. Default 30. */
  clockToleranceSeconds?: number;
}

interface BearerClaims {
  subject: string;
  organizationId: string;
  workspaceId?: string;
}

export type BearerResult = { ok: true; claims: BearerClaims } | { ok: false; reason: string };

export interface BearerVerifier {
  /** Never throws: a refused token yields a reason that is safe to show the caller. */
  verify(token: string): Promise<BearerResult>;
}

const ASYMMETRIC = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"];
const SYMMETRIC = ["HS256", "HS384", "HS512"];
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

export function createBearerVerifier(config: BearerConfig): BearerVerifier {
  const sources = [config.jwksUrl, config.jwksFile, config.secret].filter((s) => s !== undefined && s !== "");
  if (!config.issuer) throw new Error("bearer auth: an issuer is required (SLIPWAY_JWT_ISSUER)");
  if (sources.length !== 1) {
    throw new Error("bearer auth: configure exactly one of a JWKS URL, a JWKS file or a shared secret");
  }
  let key: JWTVerifyGetKey | Uint8Array;
  let algorithms: string[];
  if (config.secret) {
    if (config.secret.length < 32) throw new Error("bearer auth: the shared secret must be at least 32 characters");
    key = new TextEncoder().encode(config.secret);
    algorithms = SYMMETRIC;
  } else if (config.jwksFile) {
    const jwks = JSON.parse(readFileSync(config.jwksFile, "utf8")) as JSONWebKeySet;
    if (!Array.isArray(jwks.keys)) throw new Error(`bearer auth: ${config.jwksFile} is not a JWKS (no "keys" array)`);
    key = createLocalJWKSet(jwks);
    algorithms = ASYMMETRIC;
  } else {
    key = createRemoteJWKSet(new URL(config.jwksUrl!), { timeoutDuration: 5000, cooldownDuration: 30_000 });
    algorithms = ASYMMETRIC;
  }
  const options = {
    issuer: config.issuer,
    audience: config.audience ?? "slipway",
    algorithms,
    requiredClaims: ["exp", "sub"],
    clockTolerance: config.clockToleranceSeconds ?? 30,
  };

  return {
    async verify(token) {
      try {
        const { payload } = typeof key === "function" ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options);
        const organizationId = payload.org_id;
        if (typeof organizationId !== "string" || !UUID.test(organizationId)) {
          return { ok: false, reason: "token has no org_id claim (the organization id)" };
        }
        const workspaceId = payload.workspace_id;
        if (workspaceId !== undefined && (typeof workspaceId !== "string" || !UUID.test(workspaceId))) {
          return { ok: false, reason: "token's workspace_id claim is not a workspace id" };
        }
        return {
          ok: true,
          claims: { subject: payload.sub!, organizationId: organizationId.toLowerCase(), workspaceId: workspaceId?.toLowerCase() },
        };
      } catch (error) {
        return { ok: false, reason: describe(error) };
      }
    },
  };
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "token expired";
  if (error instanceof errors.JWTClaimValidationFailed) return `token claim "${error.claim}" is not acceptable`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return "token signature does not verify";
  if (error instanceof errors.JWKSNoMatchingKey) return "token signed by an unknown key";
  if (error instanceof errors.JOSEAlgNotAllowed) return "token algorithm not allowed";
  if (error instanceof errors.JWKSTimeout) return "key set of the issuer unreachable (timeout)";
  if (error instanceof errors.JWTInvalid || error instanceof errors.JWSInvalid) return "malformed token";
  return "token rejected";
}
