// The ENDPOINT block's HTTP call: http(s) only, a timeout, a response-size cap, and a guard that refuses
// loopback, private, link-local and internal-only hosts (redirects are followed by hand and checked too).
// Workers cannot resolve DNS before fetching, so the guard judges the URL's host as written (docs/reliability.md
// lists what it refuses and what remains); on Cloudflare's network a Worker cannot reach a private network
// anyway, the guard matters for self-hosting.
import { BlockError, type EndpointPolicy } from "./types";
import { tryParseJson } from "./values";

export const DEFAULT_ENDPOINT_POLICY: EndpointPolicy = { timeoutMs: 15_000, allowPrivateAddresses: false, maxResponseBytes: 1_048_576 };
const MAX_REDIRECTS = 5;

function ipv4Private(parts: number[]): boolean {
  const [a, b] = parts;
  return (
    a === 0 || a === 10 || a === 127 || a >= 224 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && (parts[2] === 0 || parts[2] === 2)) || // IETF protocol assignments, TEST-NET-1
    (a === 192 && b === 88 && parts[2] === 99) || // 6to4 relay anycast
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    (a === 198 && b === 51 && parts[2] === 100) || // TEST-NET-2
    (a === 203 && b === 0 && parts[2] === 113) // TEST-NET-3
  );
}

/** Suffixes of names that resolve inside a private network, by convention or by IANA's special-use registry. */
const INTERNAL_SUFFIXES = ["localhost", "localdomain", "local", "internal", "intranet", "lan", "home", "corp", "private", "svc", "home.arpa"];
/** Public names that exist to resolve to loopback or to any address written into them (well-known ones; see docs/reliability.md). */
const LOOPBACK_DOMAINS = [
  "localtest.me", "lvh.me", "vcap.me", "fuf.me", "localho.st", "localhost.direct", "lacolhost.com", "smackaho.st",
  "localhost.run", "nip.io", "sslip.io", "xip.io", "traefik.me", "127.0.0.1.nip.io",
];
/** Cloud metadata services' names that are not under an internal suffix (metadata.google.internal is). */
const METADATA_NAMES = ["metadata.goog", "metadata.tencentyun.com"];

/** A private or loopback IPv4 written into a name ("127.0.0.1.example.com", "10-0-0-1.example.com"). */
function embedsPrivateIPv4(host: string): boolean {
  for (const m of host.matchAll(/(?:^|[.-])(\d{1,3})[.-](\d{1,3})[.-](\d{1,3})[.-](\d{1,3})(?=$|[.-])/g)) {
    const parts = m.slice(1, 5).map(Number);
    if (parts.every((p) => p <= 255) && ipv4Private(parts)) return true;
  }
  return false;
}

/** The 8 hextets of an IPv6 address (with :: expanded and a trailing dotted quad folded), or null. */
function ipv6Hextets(h: string): number[] | null {
  let s = h.toLowerCase();
  const quad = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (quad) {
    const [a, b, c, d] = quad.slice(2).map(Number);
    s = `${quad[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const part = (x: string) => (x === "" ? [] : x.split(":").map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = part(halves[0]);
  const tail = halves.length === 2 ? part(halves[1]) : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const all = [...head, ...Array(Math.max(0, fill)).fill(0), ...tail];
  return all.length === 8 && all.every((g) => Number.isInteger(g)) ? all : null;
}

function ipv6Private(h: string): boolean {
  const g = ipv6Hextets(h);
  if (!g) return true; // not an address we can read: refuse rather than guess
  const v4 = (hi: number, lo: number) => ipv4Private([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 8) || (zero(0, 7) && g[7] === 1)) return true; // :: and ::1
  // IPv4 inside IPv6: compatible (::a.b.c.d), mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d),
  // NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::): judged by the IPv4 address they carry.
  if (zero(0, 5) && (g[5] === 0 || g[5] === 0xffff)) return v4(g[6], g[7]);
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return v4(g[6], g[7]);
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return true; // local-use NAT64 (RFC 8215)
  if (g[0] === 0x2002) return v4(g[1], g[2]);
  if (g[0] === 0x2001 && g[1] === 0) return true; // Teredo: the IPv4 inside is obfuscated
  if (g[0] === 0x2001 && g[1] === 0xdb8) return true; // documentation
  if (g[0] === 0x100 && zero(1, 4)) return true; // discard-only 100::/64
  // Unique local fc00::/7, link-local fe80::/10, site-local fec0::/10, multicast ff00::/8.
  return (g[0] & 0xfe00) === 0xfc00 || (g[0] & 0xffc0) === 0xfe80 || (g[0] & 0xffc0) === 0xfec0 || (g[0] & 0xff00) === 0xff00;
}

/**
 * The host as it will be resolved: lower case, every trailing dot gone ("localhost.." is localhost),
 * read again as a URL host until it no longer changes, so "0x7f.0.0.1.." is judged as 127.0.0.1.
 */
function canonicalHost(hostname: string): string | null {
  let host = hostname.toLowerCase();
  for (let i = 0; i < 4; i++) {
    const stripped = host.replace(/\.+$/, "");
    if (stripped.startsWith("[")) return stripped;
    let again: string;
    try {
      again = new URL(`http://${stripped}/`).hostname.toLowerCase();
    } catch {
      return null;
    }
    if (again === host) return host;
    host = again;
  }
  return host.replace(/\.+$/, "");
}

/** Why a URL may not be called, or null when it may. */
export function endpointUrlProblem(raw: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "is not a valid URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  if (url.username || url.password) return "must not carry credentials; use headers";
  if (allowPrivate) return null;
  const host = canonicalHost(url.hostname);
  if (host === null) return "has a host name that cannot be read";
  if (host.startsWith("[")) return ipv6Private(host.slice(1, -1)) ? "points at a loopback or private address" : null;
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (v4) return ipv4Private(v4.slice(1).map(Number)) ? "points at a loopback or private address" : null;
  if (!host.includes(".") || INTERNAL_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`))) return "points at a local or internal host name";
  if (METADATA_NAMES.some((d) => host === d || host.endsWith(`.${d}`))) return "points at a cloud metadata service";
  if (LOOPBACK_DOMAINS.some((d) => host === d || host.endsWith(`.${d}`)) || embedsPrivateIPv4(host)) {
    return "is a name made to point at a loopback or private address";
  }
  return null;
}

async function readCapped(res: Response, max: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw new BlockError(`the endpoint's response is larger than ${max} bytes`);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

export interface EndpointCall {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: unknown;
}

/** Calls the endpoint; the answer's JSON when it is JSON, else its text. Non-2xx answers are errors. */
export async function callEndpoint(call: EndpointCall, policy: EndpointPolicy, fetchImpl: typeof fetch = fetch): Promise<unknown> {
  const signal = AbortSignal.timeout(policy.timeoutMs);
  let url = call.url;
  let method = call.method.toUpperCase();
  let body: string | undefined = method === "GET" || method === "HEAD" ? undefined : JSON.stringify(call.body ?? {});
  for (let hop = 0; ; hop++) {
    const problem = endpointUrlProblem(url, policy.allowPrivateAddresses);
    if (problem) throw new BlockError(`url ${problem}: ${url}`);
    let res: Response;
    try {
      res = await fetchImpl(url, {
        method,
        headers: { ...(body !== undefined ? { "content-type": "application/json" } : {}), ...call.headers },
        body,
        redirect: "manual",
        signal,
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      throw new BlockError(timedOut ? `the endpoint did not answer within ${policy.timeoutMs} ms` : `the endpoint could not be reached: ${(err as Error)?.message ?? err}`);
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      if (hop >= MAX_REDIRECTS) throw new BlockError(`the endpoint redirected more than ${MAX_REDIRECTS} times`);
      await res.body?.cancel();
      url = new URL(location, url).toString();
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
        method = "GET";
        body = undefined;
      }
      continue;
    }
    const text = await readCapped(res, policy.maxResponseBytes);
    if (!res.ok) throw new BlockError(`the endpoint answered ${res.status}: ${text.slice(0, 300)}`);
    const parsed = text.trim() ? tryParseJson(text) : { ok: false as const };
    return parsed.ok ? parsed.value : text;
  }
}
