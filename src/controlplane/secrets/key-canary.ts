import { openSecret, sealSecret } from "../../auth/secret-box.ts";
import type { Database } from "../../storage/database.ts";
import { initSetting } from "../tenancy/repository.ts";

const CANARY_NAME = "secrets_key_canary";
const CANARY_TEXT = "slipway secrets key canary";

/**
 * Guards against starting with a different secrets key than the one this database's
 * secrets were sealed with (a lost `secrets.key`, a mistyped SLIPWAY_SECRETS_KEY):
 * the first start seals a canary, later starts must be able to open it.
 */
export async function checkSecretsKey(db: Database, key: Buffer, now: Date): Promise<void> {
  const sealed = await initSetting(db, CANARY_NAME, sealSecret(key, CANARY_TEXT, CANARY_NAME), now);
  try {
    if (openSecret(key, sealed, CANARY_NAME) === CANARY_TEXT) return;
  } catch {
    // fall through
  }
  throw new Error(
    "the secrets key does not match the one this database was set up with: " +
      "set SLIPWAY_SECRETS_KEY (or restore <data-dir>/secrets.key) to the original key",
  );
}
