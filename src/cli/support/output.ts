/**
 * Where things go: data (tables, ids, URLs, JSON) to stdout, so it can be piped; messages
 * (progress, warnings, errors) to stderr.
 */
export function printData(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** `--json`: one document, indented. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** `--json` on deploy and wait: one event per line. */
export function printJsonLine(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function note(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** Columns padded to their widest cell; a missing value shows as "-". */
export function printTable(headers: string[], rows: (string | number | null | undefined)[][]): void {
  const cells = [headers, ...rows.map((row) => row.map((cell) => (cell === null || cell === undefined || cell === "" ? "-" : String(cell))))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column]?.length ?? 0)));
  for (const row of cells)
    printData(
      row
        .map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column])))
        .join("  ")
        .trimEnd(),
    );
  if (rows.length === 0) note("(none)");
}

/** `key: value` lines, keys aligned, for one record. */
export function printFields(fields: [string, string | number | boolean | null | undefined][]): void {
  const width = Math.max(...fields.map(([key]) => key.length));
  for (const [key, value] of fields) printData(`${`${key}:`.padEnd(width + 1)} ${value === null || value === undefined || value === "" ? "-" : value}`);
}

/** 75 → "1m 15s"; 8 → "8s". */
export function formatElapsed(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

/** A log line or message made safe for one terminal line: no control characters, at most `width`. */
export function oneLine(text: string, width: number): string {
  // eslint-disable-next-line no-control-regex
  const clean = text
    .replace(/\x1b\[[0-9;?]*[A-Za-z]/g, "")
    .replace(/[\x00-\x1f\x7f]+/g, " ")
    .trim();
  return clean.length > width ? `${clean.slice(0, Math.max(0, width - 1))}…` : clean;
}
