// The redaction engine (src/redaction/): each detector on its values and look-alikes, the three
// actions, overlaps, custom patterns (refused when RE2 cannot run them in linear time), and the walk
// through a log's fields.
import { describe, expect, it } from "vitest";
import { checkPolicy, compilePolicy, DETECTOR_TYPES, Redaction, redactLogContent, redactRecordContent, redactSpanContent, type RedactionPolicy, type StoredPolicy } from "../../src/redaction";
import { LOOK_ALIKES, MASKS, PLANTED, PLANTED_TEXT, type PlantedKind } from "./samples";

const ALL_FIELDS: RedactionPolicy["fields"] = [];
const stored = (p: Partial<RedactionPolicy>): StoredPolicy => {
  const checked = checkPolicy({ detectors: [], custom: [], fields: ALL_FIELDS, ...p });
  if (!checked.ok) throw new Error(`${checked.field}: ${checked.message}`);
  return { ...checked.value, hash_key: "test-key" };
};
const every = (action: "mask" | "hash" | "drop") => stored({ detectors: DETECTOR_TYPES.map((type) => ({ type, action })) });
const run = async (policy: StoredPolicy, text: string) => {
  const r = new Redaction(compilePolicy(policy));
  const out = await r.text(text);
  return { ...out, counts: r.counts };
};

describe("detectors", () => {
  for (const [kind, value] of Object.entries(PLANTED) as [PlantedKind, string][]) {
    it(`${kind}: ${value.slice(0, 24)}… is masked as ${MASKS[kind]}`, async () => {
      const { value: out, counts } = await run(every("mask"), `before ${value} after`);
      expect(out).toBe(`before ${MASKS[kind]} after`);
      expect(counts).toEqual({ [kind]: 1 });
    });
  }

  it("all of them in one text, each counted", async () => {
    const { value, counts } = await run(every("mask"), PLANTED_TEXT);
    for (const v of Object.values(PLANTED)) expect(value).not.toContain(v);
    expect(counts).toEqual(Object.fromEntries(Object.keys(PLANTED).map((k) => [k, 1])));
  });

  it("look-alikes that fail their check are kept", async () => {
    for (const [name, v] of Object.entries(LOOK_ALIKES)) {
      const { value, counts } = await run(every("mask"), `x ${v} y`);
      expect(value, name).toBe(`x ${v} y`);
      expect(counts, name).toEqual({});
    }
  });

  it("cards: compact or dashed, a network's range and length; Luhn-valid numbers outside any network are kept", async () => {
    expect((await run(every("mask"), "4111111111111111")).value).toBe("[PAYMENT_CARD]");
    expect((await run(every("mask"), "5500-0000-0000-0004")).value).toBe("[PAYMENT_CARD]");
    expect((await run(every("mask"), "3782 822463 10005")).value).toBe("[PAYMENT_CARD]");
    // Luhn-valid, 16 digits, but no network starts with 9.
    expect((await run(every("mask"), "9000000000000008")).value).toBe("9000000000000008");
  });

  it("IBANs compact too; another country's length is not an IBAN", async () => {
    expect((await run(every("mask"), "GB82WEST12345698765432.")).value).toBe("[IBAN].");
    expect((await run(every("mask"), "iban: gb82 west 1234 5698 7654 32")).value).toBe("iban: [IBAN]");
  });

  it("phones: international numbers always, national ones with a region", async () => {
    const us = "(415) 555-2671";
    expect((await run(every("mask"), `call ${us}`)).value).toBe(`call ${us}`);
    const withRegion = stored({ detectors: [{ type: "phone", action: "mask", region: "US" }] });
    expect((await run(withRegion, `call ${us}`)).value).toBe("call [PHONE]");
    expect((await run(every("mask"), "call +1 415-555-2671 now")).value).toBe("call [PHONE] now");
  });

  it("IPv6 addresses, not times", async () => {
    expect((await run(every("mask"), "from 2001:db8::8a2e:370:7334 at 10:20:30")).value).toBe("from [IP_ADDRESS] at 10:20:30");
  });

  it("national ids of several countries, each by its own check", async () => {
    for (const id of ["12345678Z", "RSSMRA85T10A562S", "390.533.447-05", "AB123456C"]) {
      expect((await run(every("mask"), `id ${id}.`)).value, id).toBe("id [NATIONAL_ID].");
    }
    expect((await run(every("mask"), "id 12345678A.")).value).toBe("id 12345678A.");
  });

  it("credentials: provider and cloud keys, tokens, private keys, JWTs, this service's keys", async () => {
    const jwt = `${btoa(JSON.stringify({ alg: "HS256", typ: "JWT" })).replace(/=+$/, "")}.${btoa(JSON.stringify({ sub: "1" })).replace(/=+$/, "")}.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c`;
    const pem = `-----BEGIN RSA PRIVATE KEY-----\nMIIEow${"IBAAKCAQEAx".repeat(12)}\n-----END RSA PRIVATE KEY-----`;
    for (const secret of [
      `sk-ant-api03-${"a".repeat(93)}AA`,
      "AKIAZ5YG3NJQ7T2LPXKW",
      `ghp_${"x".repeat(36)}`,
      `xoxb-123456789012-1234567890123-${"a".repeat(24)}`,
      jwt,
      `pe_${"ab".repeat(24)}`,
      pem,
      "postgres://admin:hunter2secret@db.example.com/app",
    ]) {
      const { value, counts } = await run(every("mask"), `secret: ${secret} end`);
      expect(value, secret).not.toContain(secret);
      expect(counts.credential, secret).toBeGreaterThanOrEqual(1);
    }
  });
});

describe("actions", () => {
  it("hash: a typed, keyed hash, the same for the same value, another for another workspace's key", async () => {
    const a = await run(every("hash"), `${PLANTED.email} and ${PLANTED.email.toUpperCase()}`);
    expect(a.value).toMatch(/^\[EMAIL:[0-9a-f]{10}\] and \[EMAIL:[0-9a-f]{10}\]$/);
    const [first, second] = a.value.split(" and ");
    expect(first).toBe(second);
    const other = await run({ ...every("hash"), hash_key: "other" }, PLANTED.email);
    expect(other.value).not.toBe(first);
  });

  it("drop: the whole value goes", async () => {
    const out = await run(every("drop"), `hi ${PLANTED.email}`);
    expect(out).toMatchObject({ value: "", drop: true, counts: { email: 1 } });
  });

  it("detectors left out of the policy find nothing", async () => {
    const onlyEmail = stored({ detectors: [{ type: "email", action: "mask" }] });
    const { value } = await run(onlyEmail, PLANTED_TEXT);
    expect(value).toContain(PLANTED.payment_card);
    expect(value).not.toContain(PLANTED.email);
  });
});

describe("custom patterns", () => {
  it("named, with their own placeholder and count, before the built-ins in an overlap", async () => {
    const p = stored({ detectors: [{ type: "email", action: "mask" }], custom: [{ name: "ticket", pattern: "TICKET-[0-9]{4,8}", action: "mask", ignore_case: true }] });
    const out = await run(p, "see ticket-12345 and TICKET-9876");
    expect(out.value).toBe("see [TICKET] and [TICKET]");
    expect(out.counts).toEqual({ ticket: 2 });
  });

  it("refused when they cannot run in linear time or are too large; (a+)+$ runs in linear time and is kept", () => {
    const refuse = (pattern: string) => {
      const r = checkPolicy({ detectors: [], custom: [{ name: "x", pattern, action: "mask" }], fields: [] });
      expect(r.ok, pattern).toBe(false);
      return r.ok ? "" : r.message;
    };
    expect(refuse("(a)\\1")).toMatch(/linear time/);
    expect(refuse("(?=secret)secret")).toMatch(/linear time/);
    expect(refuse("(x{1000}){1000}")).toMatch(/linear time|too large/);
    expect(refuse("[a-z]{400}[0-9]{400}")).toMatch(/too large/);
    expect(refuse("a*")).toMatch(/empty string/);
    expect(refuse("x".repeat(501))).toMatch(/at most 500/);
    const ok = checkPolicy({ detectors: [], custom: [{ name: "x", pattern: "(a+)+$", action: "mask" }], fields: [] });
    expect(ok.ok).toBe(true);
  });

  it("the pattern a backtracking engine takes exponential time on runs through at once here", async () => {
    const p = stored({ custom: [{ name: "as", pattern: "(a+)+b", action: "mask" }] });
    // 40 characters: a backtracking engine would try 2^40 ways.
    const out = await run(p, `${"a".repeat(40)}c`);
    expect(out.value).toBe(`${"a".repeat(40)}c`);
  });

  it("names are unique, not a detector's; detectors once each; a region only for phone", () => {
    const bad = (p: Partial<RedactionPolicy>) => checkPolicy({ detectors: [], custom: [], fields: [], ...p });
    expect(bad({ custom: [{ name: "email", pattern: "x", action: "mask" }] })).toMatchObject({ ok: false, field: "custom[0].name" });
    expect(bad({ custom: [{ name: "a", pattern: "x", action: "mask" }, { name: "a", pattern: "y", action: "mask" }] })).toMatchObject({ ok: false, field: "custom[1].name" });
    expect(bad({ detectors: [{ type: "email", action: "mask" }, { type: "email", action: "hash" }] })).toMatchObject({ ok: false, field: "detectors[1].type" });
    expect(bad({ detectors: [{ type: "email", action: "mask", region: "US" }] })).toMatchObject({ ok: false, field: "detectors[0].region" });
    expect(bad({ detectors: [{ type: "phone", action: "mask", region: "us" }] })).toMatchObject({ ok: false, field: "detectors[0].region" });
  });
});

describe("the fields of a log, a span and a log record", () => {
  const log: { input: { type: string; messages: Record<string, unknown>[] } } & Omit<Parameters<typeof redactLogContent>[1], "input"> = {
    input: {
      type: "chat",
      messages: [
        { role: "user", content: [{ type: "text", text: `I am ${PLANTED.email}` }] },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup", arguments: JSON.stringify({ card: PLANTED.payment_card }) } }] },
        { role: "tool", tool_call_id: "call_1", content: [{ type: "text", text: `IBAN ${PLANTED.iban}` }] },
      ],
    },
    output: { type: "chat", messages: [{ role: "assistant", content: [{ type: "text", text: `Noted, ${PLANTED.phone}` }] }] },
    parameters: { user: PLANTED.email },
    tags: ["ok", PLANTED.email],
    metadata: { customer: PLANTED.email, plan: "pro" },
    prompt_input_variables: { who: PLANTED.national_id },
    error_message: `failed for ${PLANTED.ip_address}`,
  };

  it("every field group is redacted; structure and other values stay", async () => {
    const r = new Redaction(compilePolicy(every("mask")));
    const out = await redactLogContent(r, log);
    const text = JSON.stringify(out);
    for (const v of Object.values(PLANTED)) expect(text).not.toContain(v);
    expect((out.input.messages[1] as { tool_calls: unknown[] }).tool_calls[0]).toMatchObject({ id: "call_1", function: { name: "lookup", arguments: '{"card":"[PAYMENT_CARD]"}' } });
    expect(out.tags).toEqual(["ok", "[EMAIL]"]);
    expect(out.metadata).toEqual({ customer: "[EMAIL]", plan: "pro" });
    expect(out.error_message).toBe("failed for [IP_ADDRESS]");
    expect(r.summary()).toEqual({ email: 4, payment_card: 1, iban: 1, phone: 1, national_id: 1, ip_address: 1 });
  });

  it("a map's values are content whatever their key: metadata, input variables, span and record attributes named id, type, role", async () => {
    const r = new Redaction(compilePolicy(every("mask")));
    const out = await redactLogContent(r, { ...log, metadata: { id: PLANTED.email, type: PLANTED.email, plan: "pro" }, prompt_input_variables: { id: PLANTED.email, role: PLANTED.phone } });
    expect(out.metadata).toEqual({ id: "[EMAIL]", type: "[EMAIL]", plan: "pro" });
    expect(out.prompt_input_variables).toEqual({ id: "[EMAIL]", role: "[PHONE]" });
    // Below a block, too: a tool call's arguments and a tool_use block's input are content.
    const blocks = await redactLogContent(r, {
      ...log,
      input: { type: "chat", messages: [{ role: "assistant", id: "msg_1", content: [{ type: "tool_use", id: "toolu_1", name: "find", input: { id: PLANTED.email } }] }] },
    });
    expect((blocks.input.messages[0] as { content: unknown[] }).content[0]).toEqual({ type: "tool_use", id: "toolu_1", name: "find", input: { id: "[EMAIL]" } });
    expect(blocks.input.messages[0]).toMatchObject({ role: "assistant", id: "msg_1" });
    const span = await redactSpanContent(r, { attributes: { id: PLANTED.email }, resource: { type: PLANTED.email }, events: [{ attributes: { call_id: PLANTED.email } }], status: { code: 0, message: null } });
    expect(JSON.stringify(span)).not.toContain(PLANTED.email);
    const record = await redactRecordContent(r, { body: { role: "user", id: PLANTED.email }, attributes: { id: PLANTED.email }, resource: {} });
    expect(JSON.stringify(record)).not.toContain(PLANTED.email);
  });

  it("drop removes map keys and tags, empties message texts", async () => {
    const r = new Redaction(compilePolicy(every("drop")));
    const out = await redactLogContent(r, log);
    expect(out.metadata).toEqual({ plan: "pro" });
    expect(out.tags).toEqual(["ok"]);
    expect((out.input.messages[0] as { content: unknown[] }).content[0]).toEqual({ type: "text", text: "" });
    expect(out.error_message).toBeNull();
  });

  it("a policy's fields limit where it applies", async () => {
    const r = new Redaction(compilePolicy(stored({ detectors: [{ type: "email", action: "mask" }], fields: ["metadata"] })));
    const out = await redactLogContent(r, log);
    expect(out.metadata.customer).toBe("[EMAIL]");
    expect(JSON.stringify(out.input)).toContain(PLANTED.email);
  });

  it("spans: attributes, resource, events, status message; log records: body and attributes", async () => {
    const r = new Redaction(compilePolicy(every("mask")));
    const span = await redactSpanContent(r, {
      attributes: { "gen_ai.prompt": `hi ${PLANTED.email}`, n: 3 },
      resource: { "host.ip": PLANTED.ip_address },
      events: [{ attributes: { body: PLANTED.payment_card } }],
      status: { code: 2, message: `bad ${PLANTED.credential}` },
    });
    expect(span).toEqual({
      attributes: { "gen_ai.prompt": "hi [EMAIL]", n: 3 },
      resource: { "host.ip": "[IP_ADDRESS]" },
      events: [{ attributes: { body: "[PAYMENT_CARD]" } }],
      status: { code: 2, message: "bad [CREDENTIAL]" },
    });
    const record = await redactRecordContent(r, { body: { content: PLANTED.iban }, attributes: { who: PLANTED.email }, resource: {} });
    expect(record).toEqual({ body: { content: "[IBAN]" }, attributes: { who: "[EMAIL]" }, resource: {} });
  });
});
