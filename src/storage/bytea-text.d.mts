// Types of bytea-text.mjs (plain JavaScript: the embedded database's thread imports it too).
export function byteaText(bytes: Uint8Array): string;
export function parseByteaText(text: string): Uint8Array | undefined;
export function parseByteaArrayText(text: string): Array<Uint8Array | null> | undefined;
export function byteaArrayText(values: unknown): string | undefined;
