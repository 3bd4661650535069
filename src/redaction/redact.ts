// One text through a compiled policy: every detector and custom pattern finds its spans, overlaps are
// settled (custom patterns first, then the built-ins in DETECTOR_TYPES order, then the longer span),
// and each span kept becomes its action's output: `mask` a typed placeholder ([EMAIL]), `hash` the
// placeholder with a keyed hash of the value's canonical form ([EMAIL:3fa9c0d2e1], the same for the
// same value within the workspace, so one user can still be followed), `drop` removes the whole value.
// Counts per detector are kept for the log being redacted.
import type { RE2JS } from "re2js";
import { detect, statsOf, type TextStats } from "./detectors";
import type { Found } from "./found";
import { compileCustom, DETECTOR_TYPES, FIELD_GROUPS, type Action, type DetectorType, type FieldGroup, type StoredPolicy } from "./policy";

interface Finder {
  /** The count's name: the detector type, or the custom pattern's name. */
  name: string;
  action: Action;
  rank: number;
  find: (text: string, stats: TextStats) => Found[];
}

/** A policy ready to run: built once per stored policy and reused for every log. */
export interface CompiledPolicy {
  finders: Finder[];
  fields: ReadonlySet<FieldGroup>;
  hashKey: Promise<CryptoKey>;
}

function customFinder(re: RE2JS): (text: string) => Found[] {
  return (text) => {
    const out: Found[] = [];
    for (const m of re.matchAll(text)) {
      const start = m.index ?? 0;
      if (m[0].length > 0) out.push({ start, end: start + m[0].length, canonical: m[0] });
    }
    return out;
  };
}

const encoder = new TextEncoder();

export function compilePolicy(policy: StoredPolicy): CompiledPolicy {
  const finders: Finder[] = [];
  for (const [i, c] of policy.custom.entries()) {
    const compiled = compileCustom(c.pattern, c.ignore_case === true);
    // Checked when saved: a pattern that no longer compiles (an engine upgrade) finds nothing rather than failing every write.
    if (compiled.ok) finders.push({ name: c.name, action: c.action, rank: i, find: customFinder(compiled.re) });
  }
  for (const d of policy.detectors) {
    const rank = policy.custom.length + DETECTOR_TYPES.indexOf(d.type);
    finders.push({ name: d.type, action: d.action, rank, find: (text, stats) => detect(d.type, text, { region: d.region }, stats) });
  }
  return {
    finders,
    fields: new Set(policy.fields.filter((f): f is FieldGroup => (FIELD_GROUPS as readonly string[]).includes(f))),
    hashKey: crypto.subtle.importKey("raw", encoder.encode(policy.hash_key), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]),
  };
}

/** The placeholder of a detector or custom pattern: its name in capitals ([EMAIL], [TICKET_ID]). */
export function placeholderName(name: string): string {
  return name.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
}

interface Hit extends Found {
  finder: Finder;
}

/** Keeps the spans that win their overlaps: earliest first; at one start, the better rank, then the longer. */
function settle(hits: Hit[]): Hit[] {
  hits.sort((a, b) => a.start - b.start || a.finder.rank - b.finder.rank || b.end - a.end);
  const kept: Hit[] = [];
  let end = -1;
  for (const h of hits) {
    if (h.start < end) {
      // An overlap: the better-ranked span wins; the earlier one is replaced only when it ranks worse.
      const last = kept[kept.length - 1];
      if (h.finder.rank < last.finder.rank) {
        kept[kept.length - 1] = h;
        end = h.end;
      }
      continue;
    }
    kept.push(h);
    end = h.end;
  }
  return kept;
}

/** One log's redaction: the texts it changes and how many values each detector replaced. */
export class Redaction {
  readonly counts: Record<string, number> = {};
  private readonly hashes = new Map<string, string>();

  constructor(readonly policy: CompiledPolicy) {}

  applies(group: FieldGroup): boolean {
    return this.policy.fields.has(group);
  }

  /** The text with its findings replaced; `drop` when a finding's action drops the whole value. */
  async text(value: string): Promise<{ value: string; drop: boolean }> {
    if (value.length === 0) return { value, drop: false };
    const hits: Hit[] = [];
    const stats = statsOf(value);
    for (const finder of this.policy.finders) for (const f of finder.find(value, stats)) hits.push({ ...f, finder });
    if (hits.length === 0) return { value, drop: false };
    const kept = settle(hits);
    for (const h of kept) this.counts[h.finder.name] = (this.counts[h.finder.name] ?? 0) + 1;
    if (kept.some((h) => h.finder.action === "drop")) return { value: "", drop: true };
    let out = "";
    let at = 0;
    for (const h of kept) {
      out += value.slice(at, h.start) + (await this.replacement(h));
      at = h.end;
    }
    return { value: out + value.slice(at), drop: false };
  }

  private async replacement(h: Hit): Promise<string> {
    const label = placeholderName(h.finder.name);
    if (h.finder.action === "mask") return `[${label}]`;
    const key = `${h.finder.name}\u0000${h.canonical}`;
    let digest = this.hashes.get(key);
    if (digest === undefined) {
      const mac = await crypto.subtle.sign("HMAC", await this.policy.hashKey, encoder.encode(key));
      digest = [...new Uint8Array(mac).slice(0, 5)].map((b) => b.toString(16).padStart(2, "0")).join("");
      this.hashes.set(key, digest);
    }
    return `[${label}:${digest}]`;
  }

  /** The counts, or null when nothing was redacted (what a log stores). */
  summary(): Record<string, number> | null {
    return Object.keys(this.counts).length > 0 ? { ...this.counts } : null;
  }
}

export type { DetectorType };
