// Reads a server-sent event stream from a fetch response (EventSource cannot send the
// API key header): yields {event, data} with data parsed as JSON.

export async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let event = "message";
  let data = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const lines = buffer.split(/\r\n|\r|\n/);
    buffer = lines.pop();
    for (const line of lines) {
      if (line === "") {
        if (data.length) yield { event, data: parse(data.join("\n")) };
        event = "message";
        data = [];
      } else if (!line.startsWith(":")) {
        // A line starting with ":" is a comment (a keep-alive): skipped.
        const colon = line.indexOf(":");
        const field = colon === -1 ? line : line.slice(0, colon);
        const rest = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = rest;
        else if (field === "data") data.push(rest);
      }
    }
  }
}

function parse(text) {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
