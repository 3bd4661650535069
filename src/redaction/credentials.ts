// Credentials: secretlint's recommended rules (provider and cloud API keys: OpenAI, Anthropic, AWS,
// GCP service accounts, GitHub, GitLab, Slack, Stripe, npm, SendGrid, Hugging Face and more; private
// keys; passwords in connection strings and URLs), each run on the text as on a file, plus what those
// rules leave to others: JSON Web Tokens (checked: the header decodes to JSON naming an `alg`), this
// service's own API keys, and bearer tokens in an Authorization header.
import { rules as secretlintRules } from "@secretlint/secretlint-rule-preset-recommend";
import type { Found } from "./detectors";

/** What a secretlint rule needs of its context when it scans one text. */
interface RuleContext {
  createTranslator: () => (id: string) => string;
  report: (d: { range: readonly [number, number] }) => void;
  registerRule: () => void;
}
interface RuleCreator {
  meta: { id: string };
  create: (context: RuleContext, options: Record<string, unknown>) => { file?: (source: { content: string; filePath: string; contentType: string }) => unknown };
}

/** Rule options: AWS access key ids are scanned too (off in secretlint's default, which looks at files, not logs). */
const OPTIONS: Record<string, Record<string, unknown>> = { "@secretlint/secretlint-rule-aws": { enableIDScanRule: true } };

/** Rules that judge a file by its name or its comments, not its content: they mean nothing for a log. */
const SKIPPED = new Set(["@secretlint/secretlint-rule-filter-comments"]);

const RULES = (secretlintRules as unknown as RuleCreator[]).filter((r) => !SKIPPED.has(r.meta.id));

const JWT = /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,4096}\.[A-Za-z0-9_-]{5,8192}\.[A-Za-z0-9_-]{10,1024}(?![A-Za-z0-9_-])/g;
const OWN_KEY = /(?<![A-Za-z0-9_])pe_[0-9a-f]{48}(?![0-9a-f])/g;
const BEARER = /(?<=\b[Bb]earer\s)[A-Za-z0-9._~+/=-]{20,4096}/g;

function base64UrlJson(part: string): unknown {
  try {
    const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4)));
  } catch {
    return null;
  }
}

function findJwts(text: string): Found[] {
  if (!text.includes("eyJ")) return [];
  const out: Found[] = [];
  for (const m of text.matchAll(JWT)) {
    const header = base64UrlJson(m[0].slice(0, m[0].indexOf(".")));
    if (header && typeof header === "object" && typeof (header as { alg?: unknown }).alg === "string") out.push({ start: m.index, end: m.index + m[0].length, canonical: m[0] });
  }
  return out;
}

function findAll(text: string, re: RegExp): Found[] {
  return [...text.matchAll(re)].map((m) => ({ start: m.index, end: m.index + m[0].length, canonical: m[0] }));
}

/** Every credential in the text, by secretlint's rules and the patterns above. */
export function findCredentials(text: string): Found[] {
  // Every credential any of these rules knows is at least 16 characters without white space.
  if (text.length < 16) return [];
  const out: Found[] = [];
  for (const rule of RULES) {
    const handlers = rule.create(
      {
        createTranslator: () => (id: string) => id,
        report: ({ range }) => out.push({ start: range[0], end: range[1], canonical: text.slice(range[0], range[1]) }),
        registerRule: () => {},
      },
      OPTIONS[rule.meta.id] ?? {},
    );
    handlers.file?.({ content: text, filePath: "log.txt", contentType: "text" });
  }
  out.push(...findJwts(text));
  if (text.includes("pe_")) out.push(...findAll(text, OWN_KEY));
  if (/[Bb]earer\s/.test(text)) out.push(...findAll(text, BEARER));
  return out;
}
