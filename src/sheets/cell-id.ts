// Cell ids derived from (column id, row index), so a cell needs no stored id and an empty text cell
// needs no row at all: importing a million rows writes only the values, and a new column costs nothing
// until its cells hold something. The id is the column's UUID with its last 48 bits XOR (row index + 1):
// still a UUID, never the column's own id, unique per sheet (and globally, since column ids are), and
// decodable back.

const PREFIX_LEN = 23; // "xxxxxxxx-xxxx-xxxx-xxxx": the part of the column id a cell id keeps
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LOW = 2 ** 24;
/** Row indexes (+1) must fit in the 48 bits a cell id carries. */
export const MAX_ROW_INDEX = 2 ** 48 - 2;

function hex6(n: number): string {
  return n.toString(16).padStart(6, "0");
}

/** The first 23 characters of a column id: what every cell id of that column starts with. */
export function columnPrefix(columnId: string): string {
  return columnId.slice(0, PREFIX_LEN);
}

export function cellId(columnId: string, rowIndex: number): string {
  const tail = columnId.slice(PREFIX_LEN + 1);
  const mask = rowIndex + 1;
  const hi = parseInt(tail.slice(0, 6), 16) ^ Math.floor(mask / LOW);
  const lo = parseInt(tail.slice(6), 16) ^ mask % LOW;
  return `${columnId.slice(0, PREFIX_LEN)}-${hex6(hi)}${hex6(lo)}`;
}

/**
 * Splits a cell id into the column prefix to look up and a function giving the row index once the
 * column's full id is known; null when the string is not a lower-case UUID.
 */
export function parseCellId(id: string): { prefix: string; rowIndexFor: (columnId: string) => number } | null {
  const s = id.toLowerCase();
  if (!UUID_RE.test(s)) return null;
  const tail = s.slice(PREFIX_LEN + 1);
  return {
    prefix: s.slice(0, PREFIX_LEN),
    rowIndexFor: (columnId: string) => {
      const ct = columnId.slice(PREFIX_LEN + 1);
      const hi = parseInt(tail.slice(0, 6), 16) ^ parseInt(ct.slice(0, 6), 16);
      const lo = parseInt(tail.slice(6), 16) ^ parseInt(ct.slice(6), 16);
      return hi * LOW + lo - 1;
    },
  };
}
