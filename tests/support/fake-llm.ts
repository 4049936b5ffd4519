/**
 * A real local HTTP server that imitates an OpenAI-compatible endpoint
 * (/v1/chat/completions and /v1/completions), scripted per test.
 *
 * A script is a function from the parsed request to a reply: a text (the
 * assistant's content), or a fault (status + headers, hung connection,
 * malformed JSON, latency). Every request is logged, in arrival order.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type FakeRequest = {
  path: string;
  body: Record<string, unknown>;
  /** Authorization header as received (tests check keys are sent, never logged elsewhere). */
  authorization: string | undefined;
  /** 1-based arrival index. */
  n: number;
};

export type FakeReply =
  | string
  | {
      text?: string;
      status?: number;
      headers?: Record<string, string>;
      /** Raw body to send instead of a JSON completion (e.g. malformed JSON). */
      raw?: string;
      /** Never answer (the client must time out). */
      hang?: boolean;
      /** Accept, then destroy the socket without a reply. */
      drop?: boolean;
      delayMs?: number;
      usage?: { prompt_tokens: number; completion_tokens: number };
    };

export type Script = (req: FakeRequest) => FakeReply | Promise<FakeReply>;

export type FakeLlm = {
  url: string;
  /** Base URL for the openai client (…/v1). */
  baseUrl: string;
  requests: FakeRequest[];
  /** Answered requests, and the time from a request's arrival to its reply's end, summed (ms). */
  served: { n: number; ms: number };
  setScript: (s: Script) => void;
  setLatency: (ms: number) => void;
  close: () => Promise<void>;
};

/** The text of the last user message of a chat request, or the prompt of a completion request. */
export function lastUserText(body: Record<string, unknown>): string {
  if (typeof body.prompt === "string") return body.prompt;
  const messages = (body.messages ?? []) as { role: string; content: string }[];
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === "user") return String(messages[i].content);
  return "";
}

/** Answers every `Q<n>` / numbered checklist line of a RefineBench judge prompt with Yes. */
export function allYesJudge(prompt: string): string {
  const section = prompt.split("### Checklist (Evaluation Items)")[1]?.split("### Output Format")[0] ?? "";
  const ids = [...section.matchAll(/^(Q\d+):/gm)].map((m) => m[1]);
  return ids.map((id) => `${id}: Yes`).join("\n");
}

export async function startFakeLlm(initial: Script = () => "ok", opts: { latencyMs?: number; log?: boolean } = {}): Promise<FakeLlm> {
  let script = initial;
  let latency = opts.latencyMs ?? 0;
  const keepLog = opts.log ?? true;
  const requests: FakeRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  let n = 0;
  const served = { n: 0, ms: 0 };
  const server = http.createServer((req, res) => {
    const arrived = performance.now();
    res.once("finish", () => {
      served.n++;
      served.ms += performance.now() - arrived;
    });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      } catch {
        res.writeHead(400).end("bad json");
        return;
      }
      const path = (req.url ?? "").replace(/\?.*$/, "");
      const fr: FakeRequest = { path, body, authorization: req.headers.authorization, n: ++n };
      if (keepLog) requests.push(fr);
      let reply: FakeReply;
      try {
        reply = await script(fr);
      } catch (err) {
        res.writeHead(500, { "Content-Type": "application/json" }).end(JSON.stringify({ error: { message: String(err) } }));
        return;
      }
      const r = typeof reply === "string" ? { text: reply } : reply;
      const delay = r.delayMs ?? latency;
      if (delay > 0) await new Promise((ok) => setTimeout(ok, delay));
      if (r.hang) return; // never answer
      if (r.drop) {
        req.socket.destroy();
        return;
      }
      const status = r.status ?? 200;
      const headers = { "Content-Type": "application/json", ...(r.headers ?? {}) };
      if (r.raw !== undefined) {
        res.writeHead(status, headers).end(r.raw);
        return;
      }
      if (status >= 400) {
        res.writeHead(status, headers).end(JSON.stringify({ error: { message: `scripted ${status}`, type: "scripted" } }));
        return;
      }
      const text = r.text ?? "";
      const usage = r.usage ?? { prompt_tokens: 10, completion_tokens: Math.max(1, Math.ceil(text.length / 4)) };
      const model = String(body.model ?? "fake");
      const payload =
        path.endsWith("/completions") && !path.endsWith("/chat/completions")
          ? {
              id: `cmpl-${fr.n}`,
              object: "text_completion",
              created: 0,
              model,
              choices: [{ index: 0, text, finish_reason: "stop", logprobs: null }],
              usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
            }
          : {
              id: `chatcmpl-${fr.n}`,
              object: "chat.completion",
              created: 0,
              model,
              choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop", logprobs: null }],
              usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
            };
      res.writeHead(status, headers).end(JSON.stringify(payload));
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    served,
    setScript: (s) => (script = s),
    setLatency: (ms) => (latency = ms),
    close: () =>
      new Promise<void>((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}
