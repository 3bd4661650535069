// Request bodies for tests.

export const text = (t: string) => [{ type: "text", text: t }];

export function logBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    provider: "openai",
    model: "gpt-4o",
    input: { type: "chat", messages: [{ role: "user", content: text("Hello!") }] },
    output: { type: "chat", messages: [{ role: "assistant", content: text("Hi there!") }] },
    request_start_time: "2024-01-15T10:30:00Z",
    request_end_time: "2024-01-15T10:30:05Z",
    ...overrides,
  };
}
