/** The OpenAI-compatible provider against a real local fake server. */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { OpenAIProvider } from "../../../app/runs/providers/openai.server";
import { backoffDelay, parseRetryAfter, RateLimiter, Semaphore } from "../../../app/runs/providers/limits";
import { CHATML_TEMPLATE, renderContinuation } from "../../../app/runs/providers/chat-template";
import { ReplayProvider, requestKey } from "../../../app/runs/providers/replay.server";
import { nodeFetch, sharedHttpAgent } from "../../../app/runs/providers/node-fetch.server";
import type { CallRecord } from "../../../app/runs/providers/types";
import { tempDir } from "../../support/db";
import { startFakeLlm, type FakeLlm } from "../../support/fake-llm";

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());

const fast = { backoffBaseMs: 5, backoffMaxMs: 20, timeoutMs: 2_000, maxRetries: 3 };
const user = (content: string) => [{ role: "user" as const, content }];

function provider(extra: Partial<ConstructorParameters<typeof OpenAIProvider>[0]> = {}) {
  return new OpenAIProvider({ baseUrl: fake.baseUrl, apiKey: "sk-secret-123", model: "m1", ...fast, ...extra });
}

describe("OpenAIProvider", () => {
  it("sends the model, messages and sampling defaults, and logs the call without the key", async () => {
    fake.requests.length = 0;
    fake.setScript(() => ({ text: "hello", usage: { prompt_tokens: 7, completion_tokens: 3 } }));
    const calls: CallRecord[] = [];
    const p = provider({ defaults: { temperature: 1, top_p: 0.9 } });
    const reply = await p.call({ kind: "chat", messages: user("hi"), params: { temperature: 0 } }, { onCall: (c) => calls.push(c) });
    expect(reply).toMatchObject({ text: "hello", promptTokens: 7, completionTokens: 3, attempts: 1 });
    expect(fake.requests[0].body).toMatchObject({ model: "m1", temperature: 0, top_p: 0.9, messages: [{ role: "user", content: "hi" }] });
    expect(fake.requests[0].authorization).toBe("Bearer sk-secret-123");
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ status: 200, promptTokens: 7, completionTokens: 3, error: null });
    expect(JSON.stringify(calls)).not.toContain("sk-secret-123");
  });

  it("retries a 429 after its Retry-After, then succeeds", async () => {
    let n = 0;
    fake.setScript(() => (++n === 1 ? { status: 429, headers: { "Retry-After": "0.15" } } : "ok"));
    const calls: CallRecord[] = [];
    const t0 = Date.now();
    const reply = await provider().call({ kind: "chat", messages: user("x") }, { onCall: (c) => calls.push(c) });
    expect(reply.text).toBe("ok");
    expect(reply.attempts).toBe(2);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
    expect(calls.map((c) => c.status)).toEqual([429, 200]);
  });

  it("retries a 500 and a dropped connection", async () => {
    let n = 0;
    fake.setScript(() => (++n === 1 ? { status: 500 } : n === 2 ? { drop: true } : "fine"));
    const calls: CallRecord[] = [];
    const reply = await provider().call({ kind: "chat", messages: user("x") }, { onCall: (c) => calls.push(c) });
    expect(reply.text).toBe("fine");
    expect(calls).toHaveLength(3);
    expect(calls[0].status).toBe(500);
    expect(calls[1].error).toMatch(/connection/i);
  });

  it("times out a hung connection and retries", async () => {
    let n = 0;
    fake.setScript(() => (++n === 1 ? { hang: true } : "late but fine"));
    const calls: CallRecord[] = [];
    const reply = await provider({ timeoutMs: 150 }).call({ kind: "chat", messages: user("x") }, { onCall: (c) => calls.push(c) });
    expect(reply.text).toBe("late but fine");
    expect(calls[0].error).toMatch(/timeout/);
  });

  it("retries malformed JSON, and gives up after maxRetries with a clear error", async () => {
    fake.setScript(() => ({ raw: "{not json" }));
    const calls: CallRecord[] = [];
    await expect(provider({ maxRetries: 2 }).call({ kind: "chat", messages: user("x") }, { onCall: (c) => calls.push(c) })).rejects.toThrow(
      /malformed reply.*after 3 attempts/,
    );
    expect(calls).toHaveLength(3);
  });

  it("does not retry a 400", async () => {
    fake.setScript(() => ({ status: 400 }));
    const calls: CallRecord[] = [];
    await expect(provider().call({ kind: "chat", messages: user("x") }, { onCall: (c) => calls.push(c) })).rejects.toThrow(/HTTP 400/);
    expect(calls).toHaveLength(1);
  });

  it("never has more requests in flight than its concurrency", async () => {
    let inflight = 0;
    let peak = 0;
    fake.setScript(async () => {
      inflight++;
      peak = Math.max(peak, inflight);
      await new Promise((r) => setTimeout(r, 20));
      inflight--;
      return "ok";
    });
    const p = provider({ concurrency: 3 });
    await Promise.all(Array.from({ length: 12 }, () => p.call({ kind: "chat", messages: user("x") })));
    expect(peak).toBe(3);
  });

  it("continues a prefilled assistant reply with vLLM's continue_final_message", async () => {
    fake.requests.length = 0;
    fake.setScript(() => " and so on.");
    const messages = [...user("Q?"), { role: "assistant" as const, content: "The answer is 5. Wait" }];
    await provider().call({ kind: "continue", messages });
    expect(fake.requests[0].path).toBe("/v1/chat/completions");
    expect(fake.requests[0].body).toMatchObject({ continue_final_message: true, add_generation_prompt: false, messages });
  });

  it("continues through /v1/completions with the rendered chat template, left open", async () => {
    fake.requests.length = 0;
    fake.setScript(() => " more");
    const messages = [...user("Q?"), { role: "assistant" as const, content: "Step 1: 2+2=5." }];
    const reply = await provider({ continueMode: "template" }).call({ kind: "continue", messages });
    expect(reply.text).toBe(" more");
    expect(fake.requests[0].path).toBe("/v1/completions");
    expect(fake.requests[0].body.prompt).toBe("<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\nStep 1: 2+2=5.");
  });
});

describe("limits", () => {
  it("renderContinuation leaves the assistant turn open even when its text repeats", () => {
    const out = renderContinuation(CHATML_TEMPLATE, [
      { role: "user", content: "say A" },
      { role: "assistant", content: "A" },
    ]);
    expect(out.endsWith("<|im_start|>assistant\nA")).toBe(true);
  });

  it("backoff grows exponentially, is jittered, and respects Retry-After", () => {
    expect(backoffDelay(0, { baseMs: 100, maxMs: 10_000 }, () => 1)).toBe(100);
    expect(backoffDelay(3, { baseMs: 100, maxMs: 10_000 }, () => 1)).toBe(800);
    expect(backoffDelay(10, { baseMs: 100, maxMs: 1_000 }, () => 1)).toBe(1_000);
    expect(backoffDelay(3, { baseMs: 100, maxMs: 10_000 }, () => 0.5)).toBe(400);
    expect(backoffDelay(0, { baseMs: 100, maxMs: 10_000, retryAfterMs: 2_000 }, () => 1)).toBe(2_000);
  });

  it("parses Retry-After in seconds, as a date, and retry-after-ms", () => {
    const h = (o: Record<string, string>) => new Headers(o);
    expect(parseRetryAfter(h({ "retry-after": "3" }))).toBe(3000);
    expect(parseRetryAfter(h({ "retry-after-ms": "250" }))).toBe(250);
    expect(parseRetryAfter(h({ "retry-after": new Date(10_000).toUTCString() }), 4_000)).toBe(6_000);
    expect(parseRetryAfter(h({}))).toBeNull();
  });

  it("the rate limiter admits perMinute starts per window", async () => {
    let now = 0;
    const rl = new RateLimiter(2, () => now, 100);
    await rl.wait();
    await rl.wait();
    let third = false;
    const p = rl.wait().then(() => (third = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(third).toBe(false);
    now = 101;
    await p;
    expect(third).toBe(true);
  });

  it("the semaphore hands slots over in order", async () => {
    const s = new Semaphore(1);
    const order: number[] = [];
    const r1 = await s.acquire();
    const p2 = s.acquire().then((r) => (order.push(2), r));
    const p3 = s.acquire().then((r) => (order.push(3), r));
    r1();
    (await p2)();
    (await p3)();
    expect(order).toEqual([2, 3]);
    expect(s.inUse).toBe(0);
  });
});

describe("ReplayProvider", () => {
  it("serves recorded outputs by request, marked recorded, and fails clearly on a miss", async () => {
    const dir = tempDir();
    const file = path.join(dir, "rec.json");
    const req = { kind: "chat" as const, messages: user("What is 2+2?") };
    fs.writeFileSync(file, JSON.stringify({ recorded: true, description: "t", entries: [{ key: requestKey(req), text: "4" }] }));
    const before = process.env.CONCORD_RECORDINGS_DIR;
    process.env.CONCORD_RECORDINGS_DIR = dir; // recordings are named within one folder
    onTestFinished(() => {
      if (before === undefined) delete process.env.CONCORD_RECORDINGS_DIR;
      else process.env.CONCORD_RECORDINGS_DIR = before;
    });
    const p = new ReplayProvider("rec.json", "demo-model");
    expect(p.label).toMatch(/recorded/);
    expect(await p.call(req)).toMatchObject({ text: "4", recorded: true });
    await expect(p.call({ kind: "chat", messages: user("other") })).rejects.toThrow(/no recorded output/);
  });
});

describe("nodeFetch (the keep-alive fetch the openai client uses)", () => {
  it("posts the body, returns status, headers and JSON, and reuses one connection", async () => {
    fake.requests.length = 0;
    fake.setScript(() => ({ text: "pong", headers: { "x-request-id": "r1" } }));
    const before = fake.requests.length;
    for (let i = 0; i < 3; i++) {
      const res = await nodeFetch(`${fake.baseUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "m", messages: user("ping") }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-request-id")).toBe("r1");
      expect((await res.json()).choices[0].message.content).toBe("pong");
    }
    expect(fake.requests.length - before).toBe(3);
    const free = Object.values(sharedHttpAgent.freeSockets).flat();
    expect(free.length).toBeGreaterThanOrEqual(1);
  });

  it("hands a success back read whole (json or text, once) and any other status as a real Response with its body", async () => {
    fake.setScript(() => ({ text: "pong" }));
    const ok = await nodeFetch(`${fake.baseUrl}/chat/completions`, { method: "POST", body: "{}" });
    expect(ok.ok).toBe(true);
    expect(ok.headers.get("content-type")).toBe("application/json");
    expect(ok.url).toBe(`${fake.baseUrl}/chat/completions`);
    const copy = ok.clone();
    expect(JSON.parse(await ok.text()).choices[0].message.content).toBe("pong");
    expect(ok.bodyUsed).toBe(true);
    await expect(ok.json()).rejects.toBeInstanceOf(TypeError);
    expect((await copy.json()).object).toBe("chat.completion");
    fake.setScript(() => ({ status: 429, headers: { "retry-after": "0" } }));
    const limited = await nodeFetch(`${fake.baseUrl}/chat/completions`, { method: "POST", body: "{}" });
    expect(limited).toBeInstanceOf(Response);
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("0");
    expect((await limited.json()).error.message).toBe("scripted 429");
  });

  it("rejects with an AbortError when aborted mid-request, and with a TypeError when the connection drops", async () => {
    fake.setScript(() => ({ hang: true }));
    const ac = new AbortController();
    const pending = nodeFetch(`${fake.baseUrl}/chat/completions`, { method: "POST", body: "{}", signal: ac.signal });
    setTimeout(() => ac.abort(), 30);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    fake.setScript(() => ({ drop: true }));
    await expect(nodeFetch(`${fake.baseUrl}/chat/completions`, { method: "POST", body: "{}" })).rejects.toBeInstanceOf(TypeError);
  });
});
