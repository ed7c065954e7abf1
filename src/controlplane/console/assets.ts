import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { extname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** Where the console's browser files live: plain ES modules, CSS and HTML, served as they are. */
export const CONSOLE_WEB_DIR = fileURLToPath(new URL("./web/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

export interface Asset {
  body: Buffer;
  /** The same bytes gzipped, for clients that accept it (the first load stays small). */
  gzip: Buffer;
  type: string;
  etag: string;
}

/**
 * Every file of the console, read once: the set is closed, so a request can only ever get
 * one of these (no path from the URL reaches the file system). Keys are paths relative to
 * the web folder with forward slashes ("app.js", "views/chat.js").
 */
export function loadAssets(dir = CONSOLE_WEB_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const file of walk(dir)) {
    const type = TYPES[extname(file)];
    if (!type) continue;
    const body = readFileSync(file);
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
    assets.set(relative(dir, file).split(sep).join("/"), { body, gzip: gzipSync(body, { level: 9 }), type, etag });
  }
  return assets;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
