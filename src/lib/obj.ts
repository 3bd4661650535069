// A JSON object as the code reads free-form JSON (blueprints, provider calls, attributes, filters):
// the one guard for "an object with keys, not an array and not null".

export type Obj = Record<string, unknown>;

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
