// The one price table: US dollars per million tokens (input, output) of widely used models, so logs
// carry a cost whichever way they arrive (the SDKs' track-request and wrappers, OTLP spans, the
// playground, and POST /log-request when it is sent tokens without a price). A model not listed is
// unpriced: its log stores 0 (PromptLayer's answer has a number there) and the console shows "—".
// The longest listed name that the model starts with wins, so dated snapshots take their family's price.
// The console imports this file too (its model lists, and telling an unpriced log from a free one).

/** The table's date: the day its prices were last changed. Prices drift: change both together. */
export const PRICES_AS_OF = "2026-11-24";

const PER_MILLION: Record<string, [number, number]> = {
  "gpt-4o-mini": [0.15, 0.6],
  "gpt-4o": [2.5, 10],
  "gpt-4.1-nano": [0.1, 0.4],
  "gpt-4.1-mini": [0.4, 1.6],
  "gpt-4.1": [2, 8],
  "gpt-4-turbo": [10, 30],
  "gpt-3.5-turbo": [0.5, 1.5],
  "o1-mini": [1.1, 4.4],
  o1: [15, 60],
  "o3-mini": [1.1, 4.4],
  o3: [2, 8],
  "o4-mini": [1.1, 4.4],
  "claude-3-5-haiku": [0.8, 4],
  "claude-3-5-sonnet": [3, 15],
  "claude-3-7-sonnet": [3, 15],
  "claude-3-haiku": [0.25, 1.25],
  "claude-3-opus": [15, 75],
  "claude-sonnet-4": [3, 15],
  "claude-opus-4": [15, 75],
  "claude-haiku-4": [1, 5],
  "gemini-1.5-flash": [0.075, 0.3],
  "gemini-1.5-pro": [1.25, 5],
  "gemini-2.0-flash": [0.1, 0.4],
  "gemini-2.5-flash": [0.3, 2.5],
  "gemini-2.5-pro": [1.25, 10],
  "mistral-large": [2, 6],
  "mistral-small": [0.2, 0.6],
};
const NAMES = Object.keys(PER_MILLION).sort((a, b) => b.length - a.length);

/** The models the table prices, by family name (what the console offers in its model lists). */
export const PRICED_MODELS: readonly string[] = Object.keys(PER_MILLION);

/** The table's entry `model` is priced by (its family), or null when the table does not price it. */
export function pricedAs(model: string): string | null {
  // Bedrock and Vertex ids carry a vendor prefix ("anthropic.claude-3-5-sonnet-…").
  const name = model.toLowerCase().replace(/^(us\.|eu\.|apac\.)?(anthropic|meta|mistral|amazon)\./, "");
  return NAMES.find((n) => name.startsWith(n)) ?? null;
}

/** What `model` costs for these tokens, in dollars; 0 for a model the table does not price. */
export function priceOf(model: string, inputTokens: number, outputTokens: number): number {
  const hit = pricedAs(model);
  if (!hit) return 0;
  const [i, o] = PER_MILLION[hit];
  return Math.round(((inputTokens * i + outputTokens * o) / 1e6) * 1e9) / 1e9;
}

/**
 * The price a logged call keeps: the one it was sent with, or else the table's for its tokens. The
 * SDKs send 0 when the caller gave no price (Python's log_request defaults price to 0.0), so 0 counts
 * as no price.
 */
export function priceOfLog(log: { model: string; input_tokens: number; output_tokens: number; price?: number | null }): number {
  return log.price ? log.price : priceOf(log.model, log.input_tokens, log.output_tokens);
}
