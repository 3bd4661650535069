// National identity numbers that can be checked: each format is found by a bounded pattern, then
// checked by stdnum (a port of python-stdnum, the reference of these checks), so a number of the right
// shape that fails its check digit or date is kept. Formats without a check that sets them apart from
// any other number of that length (a Dutch BSN is one 9-digit number in eleven) are left out.
import * as ssn from "stdnum/lib/cjs/us/ssn";
import * as dni from "stdnum/lib/cjs/es/dni";
import * as nie from "stdnum/lib/cjs/es/nie";
import * as codicefiscale from "stdnum/lib/cjs/it/codicefiscale";
import * as nir from "stdnum/lib/cjs/fr/nir";
import * as cpf from "stdnum/lib/cjs/br/cpf";
import * as aadhaar from "stdnum/lib/cjs/in/aadhaar";
import * as ric from "stdnum/lib/cjs/cn/ric";
import * as nino from "stdnum/lib/cjs/gb/nino";
import * as personnummer from "stdnum/lib/cjs/se/personnummer";
import * as hetu from "stdnum/lib/cjs/fi/hetu";
import * as fodselsnummer from "stdnum/lib/cjs/no/fodselsnummer";
import * as pesel from "stdnum/lib/cjs/pl/pesel";
import * as idnr from "stdnum/lib/cjs/de/idnr";
import * as belgianNn from "stdnum/lib/cjs/be/nn";
import type { Found } from "./found";

interface IdFormat {
  /** What it is, for the docs and tests. */
  name: string;
  pattern: RegExp;
  validate: (value: string) => { isValid: boolean };
}

// Each pattern stands alone (no letter or digit on either side) and has fixed-length parts.
const edge = (body: string) => new RegExp(`(?<![A-Za-z0-9])${body}(?![A-Za-z0-9])`, "g");

export const NATIONAL_ID_FORMATS: IdFormat[] = [
  { name: "US Social Security number", pattern: edge(String.raw`\d{3}-\d{2}-\d{4}`), validate: ssn.validate },
  { name: "Spanish DNI", pattern: edge(String.raw`\d{8}-?[A-Za-z]`), validate: dni.validate },
  { name: "Spanish NIE", pattern: edge(String.raw`[XYZxyz]-?\d{7}-?[A-Za-z]`), validate: nie.validate },
  { name: "Italian codice fiscale", pattern: edge(String.raw`[A-Za-z]{6}[0-9LMNPQRSTUVlmnpqrstuv]{2}[A-Za-z][0-9LMNPQRSTUVlmnpqrstuv]{2}[A-Za-z][0-9LMNPQRSTUVlmnpqrstuv]{3}[A-Za-z]`), validate: codicefiscale.validate },
  { name: "French NIR (numéro de sécurité sociale)", pattern: edge(String.raw`[12] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}`), validate: nir.validate },
  { name: "Brazilian CPF", pattern: edge(String.raw`\d{3}\.\d{3}\.\d{3}-\d{2}`), validate: cpf.validate },
  { name: "Indian Aadhaar (grouped 4-4-4)", pattern: edge(String.raw`[2-9]\d{3}[ -]\d{4}[ -]\d{4}`), validate: aadhaar.validate },
  { name: "Chinese resident identity card", pattern: edge(String.raw`\d{17}[\dXx]`), validate: ric.validate },
  { name: "UK National Insurance number", pattern: edge(String.raw`[A-Za-z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-Da-d]`), validate: nino.validate },
  { name: "Swedish personnummer", pattern: edge(String.raw`(?:\d{2})?\d{6}[-+]\d{4}`), validate: personnummer.validate },
  { name: "Finnish henkilötunnus", pattern: edge(String.raw`\d{6}[-+A-FU-Y]\d{3}[0-9A-Ya-y]`), validate: hetu.validate },
  { name: "Norwegian fødselsnummer", pattern: edge(String.raw`\d{6} ?\d{5}`), validate: fodselsnummer.validate },
  { name: "Polish PESEL", pattern: edge(String.raw`\d{11}`), validate: pesel.validate },
  { name: "German Steuer-Identifikationsnummer", pattern: edge(String.raw`\d{2} ?\d{3} ?\d{3} ?\d{3}`), validate: idnr.validate },
  { name: "Belgian national register number", pattern: edge(String.raw`\d{2}\.?\d{2}\.?\d{2}-?\d{3}\.?\d{2}`), validate: belgianNn.validate },
];

/** Every checked national id in the text (an id found by two formats counts once). */
export function findNationalIds(text: string): Found[] {
  if (!/\d{2}/.test(text)) return [];
  const out: Found[] = [];
  const taken = new Set<number>();
  for (const format of NATIONAL_ID_FORMATS) {
    for (const m of text.matchAll(format.pattern)) {
      if (taken.has(m.index)) continue;
      let valid = false;
      try {
        valid = format.validate(m[0]).isValid;
      } catch {
        valid = false;
      }
      if (!valid) continue;
      taken.add(m.index);
      out.push({ start: m.index, end: m.index + m[0].length, canonical: m[0].replace(/[\s.-]/g, "").toUpperCase() });
    }
  }
  return out;
}
