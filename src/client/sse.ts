/** One server-sent event: `event:` (default "message"), `data:` lines joined by newlines, `id:`. */
interface ServerSentEvent {
  event: string;
  data: string;
  id?: string;
}

/**
 * Reads server-sent events from a response body. Lines end in CR, LF or CRLF; comment
 * lines (`: heartbeat`) are reported as `onComment` so a caller can tell a quiet stream
 * from a dead one.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>, onComment?: () => void): AsyncGenerator<ServerSentEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event: Partial<ServerSentEvent> & { lines: string[] } = { lines: [] };
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let match: RegExpExecArray | null;
    // Keep a trailing CR: it may be the first half of a CRLF.
    while ((match = /\r\n|\n|\r(?!$)/.exec(buffer))) {
      const line = buffer.slice(0, match.index);
      buffer = buffer.slice(match.index + match[0].length);
      if (line === "") {
        if (event.lines.length > 0 || event.event) yield { event: event.event ?? "message", data: event.lines.join("\n"), id: event.id };
        event = { lines: [] };
        continue;
      }
      if (line.startsWith(":")) {
        onComment?.();
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "event") event.event = value;
      else if (field === "data") event.lines.push(value);
      else if (field === "id") event.id = value;
    }
  }
}
