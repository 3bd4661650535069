// A new dataset from a CSV or JSON file: its columns are read in the browser (Papa Parse for CSV,
// the same parser the Worker uses, loaded only when a file is picked), the person ticks the ones to keep, and the file (with those
// columns only) fills the new dataset's draft (POST …/dataset-versions/from-file), which is then
// saved as version 1 (POST …/save-draft), ready for an evaluation.
import { useState } from "preact/hooks";
import { get, post } from "../api";
import { go } from "../router";
import { FieldError, onText, WriteError } from "../ui";

interface Parsed {
  fileName: string;
  kind: "csv" | "json";
  columns: string[];
  rows: Record<string, unknown>[];
}

type PapaModule = typeof import("papaparse");
const papa = (): Promise<PapaModule> => import("papaparse").then((m) => (m as unknown as { default?: PapaModule }).default ?? m);

/** The file's columns and rows, or why it cannot be read. */
export async function readDatasetFile(fileName: string, text: string): Promise<Parsed | string> {
  if (/\.json$/i.test(fileName)) {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (err) {
      return `the file is not JSON: ${(err as Error).message}`;
    }
    if (!Array.isArray(data) || !data.every((r) => r && typeof r === "object" && !Array.isArray(r))) return "a JSON file must be a list of objects";
    const rows = data as Record<string, unknown>[];
    return { fileName, kind: "json", columns: [...new Set(rows.flatMap((r) => Object.keys(r)))], rows };
  }
  const Papa = await papa();
  const parsed = Papa.parse<Record<string, string>>(text, { header: true, skipEmptyLines: true });
  if (parsed.errors.length) return `line ${(parsed.errors[0]!.row ?? 0) + 2}: ${parsed.errors[0]!.message}`;
  return { fileName, kind: "csv", columns: parsed.meta.fields ?? [], rows: parsed.data };
}

/** The file again with only the chosen columns, as base64 of its UTF-8 text. */
async function contentOf(p: Parsed, keep: string[]): Promise<string> {
  const rows = p.rows.map((r) => Object.fromEntries(keep.map((c) => [c, r[c] ?? null])));
  const text = p.kind === "json" ? JSON.stringify(rows) : (await papa()).unparse({ fields: keep, data: rows.map((r) => keep.map((c) => r[c] ?? "")) });
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

export function NewDataset({ onClose }: { onClose: () => void }) {
  const [name, setName] = useState("");
  const [file, setFile] = useState<Parsed | null>(null);
  const [local, setLocal] = useState<string | null>(null);
  const [keep, setKeep] = useState<string[]>([]);
  const [failure, setFailure] = useState<Error | null>(null);
  const [progress, setProgress] = useState<string | null>(null);
  const create = async () => {
    setFailure(null);
    try {
      setProgress("Creating the dataset…");
      const group = await post("/api/public/v2/dataset-groups", { name });
      const groupId = group.dataset_group.id;
      setProgress("Uploading the file…");
      await post("/api/public/v2/dataset-versions/from-file", { dataset_group_id: groupId, file_name: file!.fileName, file_content_base64: await contentOf(file!, keep) });
      setProgress("Reading the rows…");
      for (let i = 0; i < 120; i++) {
        const list = await get("/api/public/v2/datasets", { dataset_group_id: groupId });
        const draft = list.datasets.find((d) => d.version_number === -1);
        if (draft?.job_status === "FAILED") throw new Error("the file's rows could not be read");
        if (draft?.job_status === "COMPLETED") break;
        await new Promise((r) => setTimeout(r, 500));
      }
      setProgress("Saving version 1…");
      const saved = await post("/api/public/v2/dataset-versions/save-draft", { dataset_group_id: groupId });
      const versions = await get("/api/public/v2/datasets", { dataset_group_id: groupId });
      const version = versions.datasets.find((d) => d.version_number === saved.version_number);
      go("datasets", version?.id ?? saved.draft_dataset_id);
    } catch (err) {
      setProgress(null);
      setFailure(err as Error);
    }
  };
  return (
    <form
      class="new-dataset"
      data-testid="new-dataset"
      onSubmit={(e) => {
        e.preventDefault();
        void create();
      }}
    >
      <div class="form-line">
        <label>
          Name
          <input aria-label="Dataset name" value={name} onInput={onText(setName)} placeholder="e.g. Support questions" />
          <FieldError failure={failure} at="name" />
        </label>
        <label>
          File (CSV with a header row, or a JSON list of objects)
          <input
            type="file"
            aria-label="Dataset file"
            accept=".csv,.json,text/csv,application/json"
            onChange={(e) => {
              const f = (e.target as HTMLInputElement).files?.[0];
              if (!f) return;
              f.text().then(async (text) => {
                const p = await readDatasetFile(f.name, text);
                if (typeof p === "string") {
                  setLocal(p);
                  setFile(null);
                } else {
                  setLocal(null);
                  setFile(p);
                  setKeep(p.columns);
                }
              });
            }}
          />
          {local ? (
            <span class="field-error" role="alert">
              {local}
            </span>
          ) : null}
        </label>
      </div>
      {file ? (
        <fieldset class="checks" data-testid="dataset-columns">
          <legend>
            {file.rows.length} rows; the columns to keep ({keep.length} of {file.columns.length}):
          </legend>
          {file.columns.map((c) => (
            <label key={c} class="check">
              <input type="checkbox" checked={keep.includes(c)} onChange={(e) => setKeep((e.target as HTMLInputElement).checked ? file.columns.filter((x) => x === c || keep.includes(x)) : keep.filter((x) => x !== c))} />
              {c}
            </label>
          ))}
        </fieldset>
      ) : null}
      <WriteError failure={failure} shown={["name"]} />
      <div class="form-line">
        <button type="submit" class="primary" disabled={!file || keep.length === 0 || !name.trim() || progress !== null}>
          {progress ?? "Create the dataset"}
        </button>
        <button type="button" onClick={onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}
