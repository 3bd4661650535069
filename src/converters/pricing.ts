// Prices in US dollars per million tokens (input, output) of widely used models, so logs written
// from provider calls carry a cost. A model not listed costs 0 (the log still records its tokens).
// The longest listed name that the model starts with wins, so dated snapshots take their family's price.

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

export function priceOf(model: string, inputTokens: number, outputTokens: number): number {
  // Bedrock and Vertex ids carry a vendor prefix ("anthropic.claude-3-5-sonnet-…").
  const name = model.toLowerCase().replace(/^(us\.|eu\.|apac\.)?(anthropic|meta|mistral|amazon)\./, "");
  const hit = NAMES.find((n) => name.startsWith(n));
  if (!hit) return 0;
  const [i, o] = PER_MILLION[hit];
  return Math.round(((inputTokens * i + outputTokens * o) / 1e6) * 1e9) / 1e9;
}
