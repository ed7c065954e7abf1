import { SlipwayError } from "../../http/errors.ts";
import type { AddressGuardPolicy } from "../../net/address-guard.ts";
import type { ControlPlaneDeps } from "../context.ts";
import * as flows from "./flow-repository.ts";
import * as providers from "./repository.ts";
import { openTokenField, providerClient, sealTokenField } from "./token-sealing.ts";
import { refreshTokens, type TokenSet } from "./token-endpoint.ts";

/** Refresh when less than this is left, or half the token's lifetime if that is shorter. */
const REFRESH_MARGIN_MS = 60_000;

/**
 * Hands out stored access tokens, refreshing them (RFC 6749 §6) before they expire. A token
 * is refreshed when less than a minute is left, or less than half its lifetime for tokens
 * that live under two minutes. One refresh per token at a time in this process; across
 * processes the write is a compare-and-set on `updated_at`, and the loser rereads the winner's token.
 */
export class TokenKeeper {
  private readonly refreshing = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly deps: Pick<ControlPlaneDeps, "db" | "secretsKey" | "now">,
    private readonly guard: AddressGuardPolicy,
  ) {}

  /** The access token, fresh; undefined when it has expired and cannot be refreshed. */
  async accessToken(row: flows.TokenRow): Promise<string | undefined> {
    if (!this.needsRefresh(row)) return this.open(row);
    let pending = this.refreshing.get(row.id);
    if (!pending) {
      pending = this.refresh(row).finally(() => this.refreshing.delete(row.id));
      this.refreshing.set(row.id, pending);
    }
    return pending;
  }

  /** The sealed columns of a token set, for a new or replaced token row. */
  sealed(
    tokenId: string,
    set: TokenSet,
    previousRefresh: string | null = null,
  ): Pick<flows.TokenRow, "access_token_sealed" | "refresh_token_sealed" | "token_type" | "expires_at"> {
    const { secretsKey, now } = this.deps;
    return {
      access_token_sealed: sealTokenField(secretsKey, tokenId, "access_token", set.accessToken),
      // A provider that does not rotate refresh tokens answers without one: the old one stays good.
      refresh_token_sealed: set.refreshToken ? sealTokenField(secretsKey, tokenId, "refresh_token", set.refreshToken) : previousRefresh,
      token_type: set.tokenType,
      expires_at: set.expiresIn ? new Date(now().getTime() + set.expiresIn * 1000) : null,
    };
  }

  private needsRefresh(row: flows.TokenRow): boolean {
    if (!row.expires_at) return false;
    const expires = new Date(row.expires_at).getTime();
    const lifetime = expires - new Date(row.updated_at).getTime();
    const margin = Math.min(REFRESH_MARGIN_MS, Math.max(0, lifetime / 2));
    return expires - this.deps.now().getTime() < margin;
  }

  private expired(row: flows.TokenRow): boolean {
    return row.expires_at !== null && new Date(row.expires_at).getTime() <= this.deps.now().getTime();
  }

  private open(row: flows.TokenRow): string | undefined {
    return this.expired(row) ? undefined : openTokenField(this.deps.secretsKey, row.id, "access_token", row.access_token_sealed);
  }

  private async refresh(stale: flows.TokenRow): Promise<string | undefined> {
    const { db, secretsKey, now } = this.deps;
    // Another process may have refreshed it since it was read.
    const row = (await flows.findToken(db, stale.workspace_id, stale.id)) ?? stale;
    if (!this.needsRefresh(row)) return this.open(row);
    const provider = await providers.findProviderById(db, row.provider_ref);
    if (!row.refresh_token_sealed || !provider) return this.open(row);
    const refreshToken = openTokenField(secretsKey, row.id, "refresh_token", row.refresh_token_sealed);
    let set: TokenSet;
    try {
      set = await refreshTokens(providerClient(secretsKey, provider), refreshToken, this.guard);
    } catch (error) {
      // Refused (invalid_grant: revoked or expired refresh token): the token dies with its expiry.
      // Unreachable: the current token serves while it lasts.
      if (error instanceof SlipwayError && (error.code === "bad_request" || !this.expired(row))) return this.current(row);
      throw error;
    }
    const next = { ...row, ...this.sealed(row.id, set, row.refresh_token_sealed), scopes: row.scopes, updated_at: now() };
    if (await flows.replaceTokenSecrets(db, next, new Date(row.updated_at))) return set.accessToken;
    return this.current(row);
  }

  /** The token as stored now: another process may have refreshed it (with a rotated refresh token this one's refresh is then refused). */
  private async current(row: flows.TokenRow): Promise<string | undefined> {
    const now = await flows.findToken(this.deps.db, row.workspace_id, row.id);
    return now ? this.open(now) : undefined;
  }
}
