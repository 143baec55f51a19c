// A client of the server's event streams as the console reads them: `fetch` with the bearer
// and a JSON body, the streamed body parsed into `event:`/`data:` blocks as they arrive.

export interface SseEvent {
  readonly event: string;
  // biome-ignore lint/suspicious/noExplicitAny: event data is JSON read field by field
  readonly data: any;
}

/** An open stream: its events as they are parsed, and whether the body ended cleanly. */
export interface OpenStream {
  readonly status: number;
  readonly contentType: string | null;
  readonly events: SseEvent[];
  readonly comments: string[];
  /** Resolves "ended" when the body ends, or with the error that cut it. */
  readonly closed: Promise<"ended" | Error>;
  abort(): void;
}

export async function openStream(
  url: string,
  path: string,
  token: string,
  body: object,
): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const read = async (): Promise<"ended" | Error> => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = "message";
          let data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) comments.push(line);
            else if (line.startsWith("event: ")) event = line.slice(7);
            else if (line.startsWith("data: ")) data += line.slice(6);
          }
          if (data !== "") events.push({ event, data: JSON.parse(data) });
        }
      }
      return "ended";
    } catch (error) {
      return error as Error;
    }
  };
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    events,
    comments,
    closed: response.ok ? read() : Promise.resolve("ended"),
    abort: () => controller.abort(),
  };
}
