/**
 * Which secret values the logs hide. A value that cannot be told from ordinary words
 * (a boolean, a plain number, anything under 6 characters) is left alone: hiding
 * `false` would turn every `false` of a build log into `****` and hide nothing. The
 * revision's build log warns about such secrets instead (unredactedSecrets).
 */
const MIN_HIDDEN_LENGTH = 6;
const WORDS = /^(true|false|yes|no|on|off|null|none|undefined)$/i;
const PLAIN_NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

export function isRedactable(value: string): boolean {
  return value.length >= MIN_HIDDEN_LENGTH && !WORDS.test(value) && !PLAIN_NUMBER.test(value.trim());
}

/** The names of the secrets whose values the logs show as they are. */
export function unredactedSecrets(secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([, value]) => value !== "" && !isRedactable(value))
    .map(([name]) => name);
}
