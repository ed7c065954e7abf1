import { writeFileSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { SignJWT, exportJWK, generateKeyPair, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBearerVerifier } from "./bearer.ts";

const ISSUER = "https://idp.example.test/";
const SECRET = "a-shared-secret-of-at-least-32-characters!";
const ORG = randomUUID();
const WORKSPACE = randomUUID();

function token(claims: Record<string, unknown>, options: { issuer?: string; audience?: string; expires?: string | number } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? "slipway")
    .setSubject("user-1")
    .setIssuedAt()
    .setExpirationTime(options.expires ?? "5m")
    .sign(new TextEncoder().encode(SECRET));
}

describe("bearer tokens with a shared secret", () => {
  const verifier = createBearerVerifier({ issuer: ISSUER, secret: SECRET });

  it("accepts a valid token and reads org_id, workspace_id and sub", async () => {
    expect(await verifier.verify(await token({ org_id: ORG }))).toEqual({
      ok: true,
      claims: { subject: "user-1", organizationId: ORG, workspaceId: undefined },
    });
    const scoped = await verifier.verify(await token({ org_id: ORG, workspace_id: WORKSPACE }));
    expect(scoped.ok && scoped.claims.workspaceId).toBe(WORKSPACE);
  });

  it("refuses wrong issuer, audience, expired tokens, bad signatures and missing claims", async () => {
    const reasons = async (t: string) => {
      const result = await verifier.verify(t);
      expect(result.ok).toBe(false);
      return result.ok ? "" : result.reason;
    };
    expect(await reasons(await token({ org_id: ORG }, { issuer: "https://evil.test/" }))).toMatch(/iss/);
    expect(await reasons(await token({ org_id: ORG }, { audience: "other" }))).toMatch(/aud/);
    expect(await reasons(await token({ org_id: ORG }, { expires: Math.floor(Date.now() / 1000) - 3600 }))).toBe("token expired");
    expect(await reasons(await token({}))).toMatch(/org_id/);
    expect(await reasons(await token({ org_id: "not-a-uuid" }))).toMatch(/org_id/);
    expect(await reasons(await token({ org_id: ORG, workspace_id: 5 }))).toMatch(/workspace_id/);
    const good = await token({ org_id: ORG });
    expect(await reasons(good.slice(0, -2) + (good.endsWith("AA") ? "BB" : "AA"))).toMatch(/signature|malformed/);
    expect(await reasons("not.a.jwt")).toMatch(/malformed|rejected/);
  });

  it("refuses an unsigned (alg none) token", async () => {
    const header = Buffer.from(JSON.stringify({ alg: "none" })).toString("base64url");
    const now = Math.floor(Date.now() / 1000);
    const body = Buffer.from(JSON.stringify({ iss: ISSUER, aud: "slipway", sub: "x", org_id: ORG, exp: now + 300 })).toString("base64url");
    expect((await verifier.verify(`${header}.${body}.`)).ok).toBe(false);
  });
});

describe("bearer tokens with a key set", () => {
  let server: Server;
  let jwksUrl: string;
  let privateKey: CryptoKey;
  let jwk: JWK;

  beforeAll(async () => {
    const pair = await generateKeyPair("ES256");
    privateKey = pair.privateKey;
    jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    server = createServer((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address() as { port: number };
    jwksUrl = `http://127.0.0.1:${address.port}/.well-known/jwks.json`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const signed = (key: CryptoKey | Uint8Array, alg: string) =>
    new SignJWT({ org_id: ORG })
      .setProtectedHeader({ alg, kid: "k1" })
      .setIssuer(ISSUER)
      .setAudience("slipway")
      .setSubject("ci-bot")
      .setExpirationTime("5m")
      .sign(key);

  it("verifies against a JWKS URL", async () => {
    const verifier = createBearerVerifier({ issuer: ISSUER, jwksUrl });
    const result = await verifier.verify(await signed(privateKey, "ES256"));
    expect(result).toEqual({ ok: true, claims: { subject: "ci-bot", organizationId: ORG, workspaceId: undefined } });
  });

  it("verifies against a JWKS file, and refuses keys it does not hold", async () => {
    const dir = mkdtempSync(join(tmpdir(), "slipway-jwks-"));
    const file = join(dir, "jwks.json");
    writeFileSync(file, JSON.stringify({ keys: [jwk] }));
    const verifier = createBearerVerifier({ issuer: ISSUER, jwksFile: file });
    expect((await verifier.verify(await signed(privateKey, "ES256"))).ok).toBe(true);
    const stranger = await generateKeyPair("ES256");
    const refused = await verifier.verify(await signed(stranger.privateKey, "ES256"));
    expect(refused.ok).toBe(false);
  });

  it("refuses an HMAC token when a key set is configured (algorithm confusion)", async () => {
    const verifier = createBearerVerifier({ issuer: ISSUER, jwksUrl });
    const forged = await signed(new TextEncoder().encode(JSON.stringify(jwk)), "HS256");
    const result = await verifier.verify(forged);
    expect(result).toEqual({ ok: false, reason: "token algorithm not allowed" });
  });

  it("refuses ambiguous or weak configuration", () => {
    expect(() => createBearerVerifier({ issuer: ISSUER })).toThrow(/exactly one/);
    expect(() => createBearerVerifier({ issuer: ISSUER, secret: SECRET, jwksUrl })).toThrow(/exactly one/);
    expect(() => createBearerVerifier({ issuer: ISSUER, secret: "short" })).toThrow(/32 characters/);
    expect(() => createBearerVerifier({ issuer: "", secret: SECRET })).toThrow(/issuer/);
  });
});
