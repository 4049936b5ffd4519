/**
 * Renders a model's chat template (Jinja, as shipped in tokenizer_config.json)
 * with @huggingface/jinja, for providers that only offer /v1/completions for a
 * prefilled assistant reply. The last (assistant) message is left open: the
 * rendered text is cut right after its content, so no end-of-turn token follows.
 */
import { Template } from "@huggingface/jinja";
import type { ChatMessage } from "./types";

/** A ChatML template (Qwen and many others), used when a provider names none. */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

export function renderChat(
  template: string,
  messages: ChatMessage[],
  opts: { addGenerationPrompt?: boolean; bosToken?: string; eosToken?: string } = {},
): string {
  return new Template(template).render({
    messages,
    add_generation_prompt: opts.addGenerationPrompt ?? false,
    bos_token: opts.bosToken ?? "",
    eos_token: opts.eosToken ?? "",
  });
}

/**
 * The prompt that makes a completion model continue the final assistant
 * message: the template rendered over all messages, truncated after the
 * final message's content.
 */
export function renderContinuation(template: string, messages: ChatMessage[], opts: { bosToken?: string; eosToken?: string } = {}): string {
  const last = messages[messages.length - 1];
  if (!last || last.role !== "assistant") throw new Error("renderContinuation: the last message must be the assistant prefix");
  // A sentinel makes the cut exact even when the prefix text appears earlier in the prompt.
  const sentinel = "\u0000CONCORD_CUT\u0000";
  const rendered = renderChat(template, [...messages.slice(0, -1), { role: "assistant", content: last.content + sentinel }], opts);
  const at = rendered.lastIndexOf(sentinel);
  if (at < 0) throw new Error("renderContinuation: the chat template dropped the assistant message");
  return rendered.slice(0, at);
}
