// Test helpers for webhooks: register one pointing at the fake receiver, read what it received,
// and verify a delivery the way a receiver would (recompute both signatures).
import { expect } from "vitest";
import { call, json, type TestKey } from "./api";

export const hookKey = () => `k${crypto.randomUUID().replace(/-/g, "")}`;
export const hookUrl = (key: string, query = "") => `https://fake-webhook.test/hooks/${key}${query}`;

export async function register(ws: TestKey, body: Record<string, unknown>) {
  const res = await call("/api/public/v2/webhooks", { method: "POST", key: ws.key, json: body });
  expect(res.status, await res.clone().text()).toBe(201);
  return json(res) as Promise<{ webhook: { id: number; url: string; events: string[] | null }; secret: string }>;
}

export interface Received {
  headers: Record<string, string>;
  body: string;
  at: number;
}

export async function inbox(key: string): Promise<Received[]> {
  return (await fetch(`https://fake-webhook.test/inbox/${key}`)).json();
}

/** Waits until the receiver has `n` requests under `key` (the queue runs in the background). */
export async function waitForInbox(key: string, n = 1, timeoutMs = 15_000): Promise<Received[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await inbox(key);
    if (got.length >= n) return got;
    if (Date.now() > deadline) throw new Error(`the receiver got ${got.length} of ${n} requests`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The events (envelopes) the receiver got under `key`. */
export async function eventsAt(key: string) {
  return (await inbox(key)).map((r) => JSON.parse(r.body));
}

const enc = new TextEncoder();
async function hmac(secret: string, data: string) {
  const k = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, enc.encode(data)));
}
const hex = (b: Uint8Array) => [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));

/** True when both signatures of a received request check out with the secret. */
export async function verify(r: Received, secret: string): Promise<boolean> {
  const plain = hex(await hmac(secret, r.body)) === r.headers["x-promptlayer-signature"];
  const id = r.headers["webhook-id"];
  const ts = r.headers["webhook-timestamp"];
  const expected = `v1,${b64(await hmac(secret, `${id}.${ts}.${r.body}`))}`;
  const standard = (r.headers["webhook-signature"] ?? "").split(" ").includes(expected);
  return plain && standard;
}
