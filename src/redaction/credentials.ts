// Credentials: secretlint's recommended rules (provider and cloud API keys: OpenAI, Anthropic, AWS,
// GCP service accounts, GitHub, GitLab, Slack, Stripe, npm, SendGrid, Hugging Face and more; private
// keys; passwords in connection strings and URLs), each run on the text as on a file, plus what those
// rules leave to others: JSON Web Tokens (checked: the header decodes to JSON naming an `alg`), this
// service's own API keys, and bearer tokens in an Authorization header.
import { rules as secretlintRules } from "@secretlint/secretlint-rule-preset-recommend";
import type { Found } from "./found";

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

/**
 * Each rule's scanner, made once (a rule's create() builds its patterns and translator): it reports
 * into `found`, which findCredentials points at its own list for the one text it scans.
 */
let found: { start: number; end: number }[] = [];
const SCANNERS = (secretlintRules as unknown as RuleCreator[])
  .filter((r) => !SKIPPED.has(r.meta.id))
  .map((rule) =>
    rule.create(
      {
        createTranslator: () => (id: string) => id,
        report: ({ range }) => found.push({ start: range[0], end: range[1] }),
        registerRule: () => {},
      },
      OPTIONS[rule.meta.id] ?? {},
    ),
  );

/**
 * What every credential those rules know has somewhere: a run of 16 or more key characters, a URL's
 * "://" (a password in a URL or a connection string), a PEM header, or an account id's label. A text
 * without any (most prose) is not scanned further.
 */
const MAYBE_CREDENTIAL = /[A-Za-z0-9_\-+/=.]{16}|:\/\/|-----BEGIN|account/i;

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
  if (text.length < 16 || !MAYBE_CREDENTIAL.test(text)) return [];
  const ranges: { start: number; end: number }[] = [];
  found = ranges;
  try {
    for (const scanner of SCANNERS) scanner.file?.({ content: text, filePath: "log.txt", contentType: "text" });
  } finally {
    found = [];
  }
  const out: Found[] = ranges.map((r) => ({ ...r, canonical: text.slice(r.start, r.end) }));
  out.push(...findJwts(text));
  if (text.includes("pe_")) out.push(...findAll(text, OWN_KEY));
  if (/[Bb]earer\s/.test(text)) out.push(...findAll(text, BEARER));
  return out;
}
