/** host/path of a repository URL in any of its spellings (https, ssh, scp-like, .git or not). */
export function repoKey(url: string): string {
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(url);
  let host: string;
  let path: string;
  if (scp && !url.includes("://")) {
    host = scp[1];
    path = scp[2];
  } else {
    try {
      const parsed = new URL(url);
      host = parsed.hostname;
      path = parsed.pathname;
    } catch {
      return url;
    }
  }
  return `${host.toLowerCase()}/${path
    .replace(/^\/+/, "")
    .replace(/\/+$/, "")
    .replace(/\.git$/, "")
    .toLowerCase()}`;
}
