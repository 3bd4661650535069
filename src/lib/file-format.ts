// The file formats imports read (sheet imports, dataset versions from a file), told by the file name.

export type ImportFormat = "csv" | "json";

export function formatOf(fileName: string): ImportFormat | null {
  const m = /\.(csv|json)$/i.exec(fileName);
  return m ? (m[1].toLowerCase() as ImportFormat) : null;
}
