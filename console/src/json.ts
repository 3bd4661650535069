// Reading free JSON (a prompt blueprint as it was logged, a tool call's arguments): the API's schema
// says only "an object" or "any value" there, so each read checks what it finds.

/** `value` as an object: itself when it is one (not an array), or else an empty one. */
export const recordOf = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/** `value` as a list: itself when it is an array, or else an empty one. */
export const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
