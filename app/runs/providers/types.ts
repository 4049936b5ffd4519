/** What protocols ask of a model, and what a provider answers. Pure types. */
import type { CallGate } from "./shared-limits.server";

export type ChatMessage = { role: "system" | "user" | "assistant"; content: string };

export type SamplingParams = {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** Extra OpenAI-compatible body fields (e.g. response_format). */
  extra?: Record<string, unknown>;
};

export type LlmRequest =
  /** An ordinary chat turn. */
  | { kind: "chat"; messages: ChatMessage[]; params?: SamplingParams }
  /**
   * The last message is an assistant message left open: the model continues it
   * (Self-Correction Bench's internal condition). Served by vLLM's
   * continue_final_message, or by rendering the chat template for /v1/completions.
   */
  | { kind: "continue"; messages: ChatMessage[]; params?: SamplingParams };

export type LlmReply = {
  text: string;
  promptTokens: number | null;
  completionTokens: number | null;
  latencyMs: number;
  /** How many HTTP attempts this took (1 = no retry). */
  attempts: number;
  /** True when the text came from a recorded file, not a live model. */
  recorded?: boolean;
};

/** One logged HTTP attempt (a row of provider_calls). Never carries the API key. */
export type CallRecord = {
  request: unknown;
  reply: unknown;
  status: number | null;
  latencyMs: number;
  promptTokens: number | null;
  completionTokens: number | null;
  error: string | null;
};

export interface LlmProvider {
  readonly label: string;
  /**
   * `gate`: the shared limits that admit and log each HTTP attempt (see
   * shared-limits.server.ts); `signal` aborts the request in flight;
   * `stopSignal` ends a backoff wait early (the job's run was paused).
   */
  call(
    req: LlmRequest,
    opts?: { onCall?: (c: CallRecord) => void; signal?: AbortSignal; gate?: CallGate; stopSignal?: AbortSignal },
  ): Promise<LlmReply>;
}

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = "ProviderError";
  }
}
