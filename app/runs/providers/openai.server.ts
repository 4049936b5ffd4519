/**
 * An OpenAI-compatible provider (vLLM, OpenRouter, LiteLLM, OpenAI) through
 * the official `openai` client. The client's own retries are off: this module
 * retries 429 (honouring Retry-After), 5xx, timeouts, dropped connections and
 * malformed replies with exponential backoff and jitter, applies the
 * provider's concurrency and requests-per-minute limits, and reports every
 * HTTP attempt to `onCall` (request body and reply; the key is never included).
 * An error's text is the upstream's, masked and cut to 200 characters
 * (egress.server.ts publicErrorText); where a request may go is egress.server.ts.
 */
import OpenAI from "openai";
import { CHATML_TEMPLATE, renderContinuation } from "./chat-template";
import { nodeFetch } from "./node-fetch.server";
import { backoffDelay, parseRetryAfter, RateLimiter, Semaphore, sleep } from "./limits";
import { publicErrorText, UNREACHABLE } from "./egress.server";
import type { CallGate } from "./shared-limits.server";
import { ProviderError, type CallRecord, type LlmProvider, type LlmReply, type LlmRequest } from "./types";

export type OpenAIProviderOptions = {
  baseUrl: string;
  apiKey?: string | null;
  model: string;
  /** Default sampling settings, overridden per request. */
  defaults?: { temperature?: number; top_p?: number; max_tokens?: number };
  concurrency?: number;
  requestsPerMinute?: number | null;
  timeoutMs?: number;
  maxRetries?: number;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** How a prefilled assistant reply is continued: vLLM's chat extension, or /v1/completions with a rendered chat template. */
  continueMode?: "vllm" | "template";
  chatTemplate?: string;
  bosToken?: string;
  eosToken?: string;
  label?: string;
  random?: () => number;
  /** The fetch the openai client uses; default: node:http with shared keep-alive agents (see node-fetch.server.ts). */
  fetch?: typeof fetch;
};

export const DEFAULT_PROVIDER_TUNING = {
  timeoutMs: 120_000,
  maxRetries: 5,
  backoffBaseMs: 500,
  backoffMaxMs: 30_000,
};

type Classified = { retryable: boolean; status: number | null; message: string; retryAfterMs: number | null };

export function classifyError(err: unknown): Classified {
  if (err instanceof OpenAI.APIConnectionTimeoutError) return { retryable: true, status: null, message: "timeout", retryAfterMs: null };
  if (err instanceof OpenAI.APIUserAbortError) return { retryable: false, status: null, message: "aborted", retryAfterMs: null };
  // One text for every failure to get an HTTP reply (refused by the egress policy, closed port, unreachable host,
  // a service that does not speak HTTP): what failed, and how, is not told to the user (it maps an inside network).
  if (err instanceof OpenAI.APIConnectionError)
    return { retryable: true, status: null, message: `connection error: ${UNREACHABLE}`, retryAfterMs: null };
  if (err instanceof OpenAI.APIError) {
    const status = err.status ?? null;
    const retryable = status === 429 || status === 408 || (status !== null && status >= 500);
    const headers = err.headers as unknown as { get(n: string): string | null } | undefined;
    return {
      retryable,
      status,
      message: `HTTP ${status}: ${err.message}`,
      retryAfterMs: status === 429 || status === 503 ? parseRetryAfter(headers) : null,
    };
  }
  if (err instanceof SyntaxError) return { retryable: true, status: 200, message: `malformed reply: ${err.message}`, retryAfterMs: null };
  if (err instanceof ProviderError) return { retryable: err.retryable, status: err.status, message: err.message, retryAfterMs: null };
  return { retryable: false, status: null, message: String((err as Error)?.message ?? err), retryAfterMs: null };
}

export class OpenAIProvider implements LlmProvider {
  readonly label: string;
  private readonly client: OpenAI;
  private readonly sem: Semaphore;
  private readonly rpm: RateLimiter;
  private readonly o: Required<Pick<OpenAIProviderOptions, "timeoutMs" | "maxRetries" | "backoffBaseMs" | "backoffMaxMs">> &
    OpenAIProviderOptions;

  constructor(opts: OpenAIProviderOptions) {
    this.o = { ...DEFAULT_PROVIDER_TUNING, ...stripUndefined(opts) };
    this.label = opts.label ?? opts.model;
    this.client = new OpenAI({
      baseURL: opts.baseUrl,
      apiKey: opts.apiKey || "EMPTY",
      maxRetries: 0,
      timeout: this.o.timeoutMs,
      fetch: opts.fetch ?? nodeFetch,
    });
    this.sem = new Semaphore(Math.max(1, opts.concurrency ?? 4));
    this.rpm = new RateLimiter(opts.requestsPerMinute ?? null);
  }

  /** The JSON body sent for a request (what provider_calls stores; no key). */
  body(req: LlmRequest): { endpoint: "chat" | "completions"; body: Record<string, unknown> } {
    const p = { ...this.o.defaults, ...stripUndefined(req.params ?? {}) } as Record<string, unknown>;
    const extra = (p.extra as Record<string, unknown> | undefined) ?? {};
    delete p.extra;
    if (req.kind === "continue" && (this.o.continueMode ?? "vllm") === "template") {
      const prompt = renderContinuation(this.o.chatTemplate ?? CHATML_TEMPLATE, req.messages, {
        bosToken: this.o.bosToken,
        eosToken: this.o.eosToken,
      });
      return { endpoint: "completions", body: { model: this.o.model, prompt, ...p, ...extra } };
    }
    const body: Record<string, unknown> = { model: this.o.model, messages: req.messages, ...p, ...extra };
    if (req.kind === "continue") {
      body.continue_final_message = true;
      body.add_generation_prompt = false;
    }
    return { endpoint: "chat", body };
  }

  /**
   * Sends a request, retrying as configured. With a `gate` (the runner's
   * database-backed limits, shared by every process) each attempt is admitted
   * and logged by the gate before it is sent, and completed after; without
   * one, this process's own semaphore and window apply and `onCall` reports
   * each attempt. Errors never carry the API key (it is masked).
   */
  async call(
    req: LlmRequest,
    opts: { onCall?: (c: CallRecord) => void; signal?: AbortSignal; gate?: CallGate; stopSignal?: AbortSignal } = {},
  ): Promise<LlmReply> {
    const { endpoint, body } = this.body(req);
    const started = Date.now();
    const estimate = opts.gate ? estimatePromptTokens(body) : null;
    let attempt = 0;
    for (;;) {
      let classified: Classified | null = null;
      const ticket = opts.gate ? await opts.gate.begin(body, estimate) : null;
      const release = ticket ? () => undefined : await this.sem.acquire();
      try {
        if (!ticket) await this.rpm.wait();
        const t0 = Date.now();
        try {
          const reply = await this.send(endpoint, body, opts.signal);
          const record = {
            reply: reply.raw,
            status: 200,
            latencyMs: Date.now() - t0,
            promptTokens: reply.promptTokens,
            completionTokens: reply.completionTokens,
            error: null,
          };
          if (ticket) ticket.end(record);
          else opts.onCall?.({ request: body, ...record });
          return {
            text: reply.text,
            promptTokens: reply.promptTokens,
            completionTokens: reply.completionTokens,
            latencyMs: Date.now() - started,
            attempts: attempt + 1,
          };
        } catch (err) {
          classified = classifyError(err);
          // What the upstream said, as stored and shown: the key masked, at most MAX_ERROR_CHARS characters.
          classified.message = publicErrorText(classified.message, [this.o.apiKey]);
          const record = {
            reply: null,
            status: classified.status,
            latencyMs: Date.now() - t0,
            promptTokens: null,
            completionTokens: null,
            error: classified.message,
          };
          if (ticket) ticket.end(record);
          else opts.onCall?.({ request: body, ...record });
        }
      } finally {
        release();
      }
      if (!classified.retryable || attempt >= this.o.maxRetries || opts.signal?.aborted) {
        throw new ProviderError(`${classified.message} (after ${attempt + 1} attempt${attempt ? "s" : ""})`, false, classified.status);
      }
      await sleep(
        backoffDelay(
          attempt,
          { baseMs: this.o.backoffBaseMs, maxMs: this.o.backoffMaxMs, retryAfterMs: classified.retryAfterMs },
          this.o.random,
        ),
        opts.stopSignal,
      );
      attempt++;
    }
  }

  private async send(endpoint: "chat" | "completions", body: Record<string, unknown>, signal?: AbortSignal) {
    if (endpoint === "completions") {
      const r = (await this.client.completions.create(body as never, { signal })) as unknown as OpenAI.Completions.Completion;
      const text = r?.choices?.[0]?.text;
      if (typeof text !== "string") throw new ProviderError("malformed reply: no choices[0].text", true, 200);
      return { text, raw: r, promptTokens: r.usage?.prompt_tokens ?? null, completionTokens: r.usage?.completion_tokens ?? null };
    }
    const r = (await this.client.chat.completions.create(body as never, { signal })) as unknown as OpenAI.Chat.Completions.ChatCompletion;
    const text = r?.choices?.[0]?.message?.content;
    if (typeof text !== "string") throw new ProviderError("malformed reply: no choices[0].message.content", true, 200);
    return { text, raw: r, promptTokens: r.usage?.prompt_tokens ?? null, completionTokens: r.usage?.completion_tokens ?? null };
  }
}

/** About four characters per token: the prompt tokens a call interrupted before its reply is counted at. */
export function estimatePromptTokens(body: Record<string, unknown>): number {
  const messages = Array.isArray(body.messages) ? (body.messages as { content?: unknown }[]) : [];
  const chars = typeof body.prompt === "string" ? body.prompt.length : messages.reduce((a, m) => a + String(m.content ?? "").length, 0);
  return Math.ceil(chars / 4);
}

function stripUndefined<T extends Record<string, unknown>>(o: T): T {
  const out = {} as T;
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
