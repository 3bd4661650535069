// What a detector answers (detectors.ts, credentials.ts, national-ids.ts), in a file of its own so
// those files import it without importing each other both ways.

/** A found value: [start, end) in the text, and its canonical form (what a hash is taken of). */
export interface Found {
  start: number;
  end: number;
  canonical: string;
}
