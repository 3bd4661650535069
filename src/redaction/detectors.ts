// The built-in detectors: each finds spans of one kind of personal data or secret in a text, and
// checks what can be checked (a card's Luhn digit, an IBAN's mod-97, a national id's own check, an
// address's octets), so a look-alike is kept. Every pattern here has bounded repeats or is a scan by
// hand, so a detector's time grows with the text, never faster; each first asks a cheap question of
// the text (an "@", enough digits) and most texts stop there.
// Well-kept libraries do what they do well: libphonenumber-js finds and validates phone numbers,
// ibantools knows each country's IBAN length and format, ipaddr.js parses addresses, stdnum checks
// national ids, secretlint's recommended rules know provider and cloud credentials (credentials.ts).
import { findNumbers, type CountryCode } from "libphonenumber-js/max";
import { countrySpecs, isValidIBAN } from "ibantools";
import ipaddr from "ipaddr.js";
import { findCredentials } from "./credentials";
import type { Found } from "./found";
import { findNationalIds } from "./national-ids";
import type { DetectorType } from "./policy";

export interface DetectorOptions {
  region?: string | null;
}

/** What the cheap questions read, counted once per text for every detector. */
export interface TextStats {
  digits: number;
}

export function statsOf(text: string): TextStats {
  let digits = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) digits++;
  }
  return { digits };
}

// ---- e-mail ----------------------------------------------------------------------------------

const LOCAL = /[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]/;
const DOMAIN = /[A-Za-z0-9.-]/;
const TLD = /\.[A-Za-z]{2,24}$/;

/** E-mail addresses: each "@" read outwards (at most 64 characters before, 255 after). */
function findEmails(text: string): Found[] {
  const out: Found[] = [];
  let at = text.indexOf("@");
  let floor = 0;
  while (at !== -1) {
    let s = at;
    while (s > floor && at - s < 64 && LOCAL.test(text[s - 1])) s--;
    while (s < at && text[s] === ".") s++;
    let e = at + 1;
    while (e < text.length && e - at <= 255 && DOMAIN.test(text[e])) e++;
    while (e > at + 1 && (text[e - 1] === "." || text[e - 1] === "-")) e--;
    const domain = text.slice(at + 1, e);
    if (s < at && domain.includes(".") && TLD.test(domain) && !domain.includes("..")) {
      out.push({ start: s, end: e, canonical: text.slice(s, e).toLowerCase() });
      floor = e;
    }
    at = text.indexOf("@", at + 1);
  }
  return out;
}

// ---- payment cards ----------------------------------------------------------------------------

const CARD = /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])/g;

export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Whether the number starts as a card network's numbers do (its issuer range), with a length that network uses. */
function cardNetwork(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p3 = Number(d.slice(0, 3));
  const p4 = Number(d.slice(0, 4));
  const p6 = Number(d.slice(0, 6));
  if (d[0] === "4") return n === 13 || n === 16 || n === 19; // Visa
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16; // Mastercard
  if (p2 === 34 || p2 === 37) return n === 15; // American Express
  if (p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || (p6 >= 622126 && p6 <= 622925)) return n >= 16 && n <= 19; // Discover
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19; // JCB
  if ((p3 >= 300 && p3 <= 305) || p2 === 36 || p2 === 38 || p2 === 39) return n >= 14 && n <= 19; // Diners Club
  if (p2 === 62) return n >= 16 && n <= 19; // UnionPay
  if (p2 === 50 || (p2 >= 56 && p2 <= 69)) return n >= 12 && n <= 19; // Maestro
  return false;
}

/** Card numbers (13 to 19 digits, spaced or dashed): a network's issuer range and length, and the Luhn check. */
function findCards(text: string): Found[] {
  const out: Found[] = [];
  for (const m of text.matchAll(CARD)) {
    const digits = m[0].replace(/[ -]/g, "");
    if (digits.length < 13 || digits.length > 19) continue;
    if (cardNetwork(digits) && luhnValid(digits)) out.push({ start: m.index, end: m.index + m[0].length, canonical: digits });
  }
  return out;
}

// ---- IBAN -------------------------------------------------------------------------------------

const IBAN_START = /\b[A-Za-z]{2}\d{2}(?=[ ]?[A-Za-z0-9])/g;

/** IBANs: a country's length and format (ibantools) and the mod-97 check; written compact or in groups of four. */
function findIbans(text: string): Found[] {
  if (!/[A-Za-z]{2}\d{2} ?[A-Za-z0-9]{4}/.test(text)) return [];
  const out: Found[] = [];
  let floor = 0;
  for (const m of text.matchAll(IBAN_START)) {
    if (m.index < floor) continue;
    const country = m[0].slice(0, 2).toUpperCase();
    const length = (countrySpecs as Record<string, { chars?: number }>)[country]?.chars;
    if (!length) continue;
    // Read `length` letters and digits from the start, a single space allowed between them.
    let compact = "";
    let i = m.index;
    while (i < text.length && compact.length < length) {
      const ch = text[i];
      if (/[A-Za-z0-9]/.test(ch)) compact += ch.toUpperCase();
      else if (!(ch === " " && compact.length > 0 && /[A-Za-z0-9]/.test(text[i + 1] ?? ""))) break;
      i++;
    }
    if (compact.length !== length || /[A-Za-z0-9]/.test(text[i] ?? "")) continue;
    if (isValidIBAN(compact)) {
      out.push({ start: m.index, end: i, canonical: compact });
      floor = i;
    }
  }
  return out;
}

// ---- IP addresses -----------------------------------------------------------------------------

const IPV4 = /(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d]|\.\d)/g;
const IPV6 = /(?<![0-9A-Fa-f:.])(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{0,4}){2,7}|::(?:[0-9A-Fa-f]{1,4}:?){1,7})(?:(?<=:)(?:\d{1,3}\.){3}\d{1,3})?(?![0-9A-Fa-f:])/g;

/** IPv4 (four decimal octets up to 255) and IPv6 addresses (as ipaddr.js parses them). */
function findIps(text: string): Found[] {
  const out: Found[] = [];
  if (/\d\.\d/.test(text)) {
    for (const m of text.matchAll(IPV4)) {
      if (ipaddr.IPv4.isValidFourPartDecimal(m[0])) out.push({ start: m.index, end: m.index + m[0].length, canonical: m[0] });
    }
  }
  if (text.includes(":")) {
    for (const m of text.matchAll(IPV6)) {
      const v = m[0];
      // A time of day (12:30:45) has no more than two colons and no hex letters: not an address.
      if ((v.match(/:/g) ?? []).length < 2 || /^\d{1,2}:\d{2}(:\d{2})?$/.test(v)) continue;
      if (ipaddr.IPv6.isValid(v)) out.push({ start: m.index, end: m.index + v.length, canonical: ipaddr.IPv6.parse(v).toNormalizedString() });
    }
  }
  return out;
}

// ---- phone numbers ----------------------------------------------------------------------------

/**
 * Phone numbers as libphonenumber-js finds them (valid numbers only, by each country's numbering
 * plan): written internationally (+44 20 7946 0958), or as `region` writes them when one is given.
 */
function findPhones(text: string, region?: string | null): Found[] {
  const found = findNumbers(text, { defaultCountry: (region ?? undefined) as CountryCode | undefined, v2: true });
  return found.map((f) => ({ start: f.startsAt, end: f.endsAt, canonical: f.number.number }));
}

/**
 * Each built-in detector: the spans it finds in a text. The digit count answers the first question
 * of those that need digits: a card has 12 or more, a phone number 7 (the shortest valid national
 * numbers), an IBAN 2, a national id 6, an address 4.
 */
export function detect(type: DetectorType, text: string, options: DetectorOptions = {}, stats: TextStats = statsOf(text)): Found[] {
  switch (type) {
    case "email":
      return text.includes("@") ? findEmails(text) : [];
    case "payment_card":
      return stats.digits >= 12 ? findCards(text) : [];
    case "iban":
      return stats.digits >= 2 ? findIbans(text) : [];
    case "ip_address":
      return stats.digits >= 4 || text.includes("::") ? findIps(text) : [];
    case "phone":
      return stats.digits >= 7 ? findPhones(text, options.region) : [];
    case "national_id":
      return stats.digits >= 6 ? findNationalIds(text) : [];
    case "credential":
      return findCredentials(text);
  }
}
