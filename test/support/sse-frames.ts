import { request, type IncomingMessage } from "node:http";

export interface SseFrame {
  event: string;
  data: string;
  id?: string;
}

/** The frames of an SSE text (heartbeat comments left out). */
export function parseSseFrames(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split("\n\n")) {
    const frame: SseFrame = { event: "message", data: "" };
    let any = false;
    for (const line of block.split("\n")) {
      const colon = line.indexOf(": ");
      if (colon <= 0) continue;
      const field = line.slice(0, colon);
      const value = line.slice(colon + 2);
      if (field === "event") frame.event = value;
      else if (field === "data") frame.data += value;
      else if (field === "id") frame.id = value;
      else continue;
      any = true;
    }
    if (any) frames.push(frame);
  }
  return frames;
}

/**
 * A client that opens a stream and reads nothing (the server sees a stalled reader)
 * until `readAll`, which reads everything to the end as fast as it comes.
 */
export function stalledReader(url: string, headers: Record<string, string> = {}) {
  let response: IncomingMessage | undefined;
  const req = request(url, { headers });
  const opened = new Promise<IncomingMessage>((resolve, reject) => {
    req.on("response", (res) => {
      response = res;
      res.pause();
      resolve(res);
    });
    req.on("error", reject);
  });
  req.end();
  return {
    opened,
    /** Whether the response is still open (the server has not ended it, or it is unread). */
    get open(): boolean {
      return response !== undefined && !response.readableEnded && !response.destroyed;
    },
    async readAll(): Promise<string> {
      const res = await opened;
      res.setEncoding("utf8");
      let text = "";
      for await (const chunk of res) text += chunk as string;
      return text;
    },
    close() {
      response?.destroy();
      req.destroy();
    },
  };
}
