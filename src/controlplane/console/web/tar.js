// A .tar.gz of a folder chosen in the browser, as `slipway deploy` uploads one: regular
// files only, paths relative to the folder, gzip by the browser's CompressionStream.

const SKIPPED = /(^|\/)(node_modules|\.git|\.venv|__pycache__)(\/|$)/;

/** Files of an <input webkitdirectory> as [path inside the project, File], the top folder cut off. */
export function projectFiles(fileList) {
  const out = [];
  for (const file of fileList) {
    const path = (file.webkitRelativePath || file.name)
      .split("/")
      .slice(file.webkitRelativePath ? 1 : 0)
      .join("/");
    if (path && !SKIPPED.test(path)) out.push([path, file]);
  }
  return out;
}

export async function tarGz(files) {
  const parts = [];
  for (const [path, file] of files) {
    parts.push(header(path, file.size, file.lastModified), file);
    const pad = (512 - (file.size % 512)) % 512;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(1024));
  const stream = new Blob(parts).stream().pipeThrough(new CompressionStream("gzip"));
  return new Response(stream).blob();
}

const encoder = new TextEncoder();

function header(path, size, mtime) {
  const block = new Uint8Array(512);
  let name = path;
  let prefix = "";
  if (encoder.encode(path).length > 100) {
    // ustar: a path past 100 bytes splits at a "/" into prefix (≤ 155) and name (≤ 100).
    const cut = path.lastIndexOf("/", 155);
    if (cut <= 0 || encoder.encode(path.slice(cut + 1)).length > 100) throw new Error(`path too long for an archive: ${path}`);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
  }
  const put = (text, offset, length) => block.set(encoder.encode(text).slice(0, length), offset);
  put(name, 0, 100);
  // mode, uid, gid, size, mtime: octal numbers ending in NUL.
  const numbers = [
    [100, 8, 0o644],
    [108, 8, 0],
    [116, 8, 0],
    [124, 12, size],
    [136, 12, Math.floor(mtime / 1000)],
  ];
  for (const [offset, length, value] of numbers) put(`${value.toString(8).padStart(length - 1, "0")}\0`, offset, length);
  put("        ", 148, 8);
  put("0", 156, 1);
  put("ustar\u000000", 257, 8);
  put(prefix, 345, 155);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8);
  return block;
}
