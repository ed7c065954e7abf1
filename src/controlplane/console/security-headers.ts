/**
 * What every console response carries. The policy allows only the console's own files:
 * no inline script or style, no eval, no other origin (it works offline), and no framing.
 * Strings from users and graphs are rendered as text, so this is the second fence, not the first.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

export const CONSOLE_HEADERS: Record<string, string> = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  // Revalidate on every load (the ETag makes that a 304): an upgraded server serves its own console.
  "cache-control": "no-cache",
};
