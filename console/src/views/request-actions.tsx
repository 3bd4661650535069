// What the requests views write: a dataset from a search's results (the dataset-from-filter API with
// its preview), a request added to a dataset, and a request scored or given metadata by hand (the
// tracking API). Every write's refusal is the API's, shown next to its field.
import { useState } from "preact/hooks";
import { get, post } from "../api";
import type { CreateDatasetVersionFromFilterParamsResponse, PreviewDatasetVersionFromFilterParamsResponse, StructuredFilterGroup, TrackMetadata, TrackScore } from "../api.gen";
import { href } from "../router";
import { FieldError, fmt, Section, useAsync, onText, WriteError } from "../ui";

/** A dataset group of the workspace, picked from the datasets list, or a new one created by name. */
function GroupPick({ value, onPick }: { value: number | null; onPick: (id: number | null) => void }) {
  const list = useAsync(() => get("/api/public/v2/datasets", { per_page: 100, sort_by: "updated_at" }), []);
  const [name, setName] = useState("");
  const [failure, setFailure] = useState<Error | null>(null);
  const groups = new Map<number, string>();
  for (const d of list.data?.datasets ?? []) groups.set(d.dataset_group_id, d.dataset_group.name);
  return (
    <div class="form-line">
      <label>
        Dataset
        <select aria-label="Dataset" value={value === null ? "" : String(value)} onChange={onText((v) => onPick(v ? Number(v) : null))}>
          <option value="">choose…</option>
          {[...groups].map(([id, n]) => (
            <option key={id} value={String(id)}>
              {n}
            </option>
          ))}
        </select>
      </label>
      <label>
        or a new one
        <input aria-label="New dataset name" value={name} onInput={onText(setName)} placeholder="name" />
        <FieldError failure={failure} at="name" />
      </label>
      <button
        type="button"
        disabled={!name.trim()}
        onClick={() =>
          post("/api/public/v2/dataset-groups", { name: name.trim() }).then(
            (g) => {
              setFailure(null);
              setName("");
              list.reload();
              onPick(g.dataset_group.id);
            },
            (e: Error) => setFailure(e),
          )
        }
      >
        Create dataset
      </button>
      <WriteError failure={failure} shown={["name"]} />
    </div>
  );
}

/** The search a dataset is made from: the same filter group and text the results came from. */
export interface SearchFilter {
  filter_group?: StructuredFilterGroup;
  q?: string;
}

/** "Make a dataset from these results": pick or create a dataset, preview what a fill adds, fill it. */
export function DatasetFromSearch({ search, onClose }: { search: SearchFilter; onClose: () => void }) {
  const [group, setGroup] = useState<number | null>(null);
  const [columns, setColumns] = useState("");
  const [preview, setPreview] = useState<PreviewDatasetVersionFromFilterParamsResponse | null>(null);
  const [queued, setQueued] = useState<CreateDatasetVersionFromFilterParamsResponse | null>(null);
  const [failure, setFailure] = useState<Error | null>(null);
  // The buttons are disabled until a dataset is picked.
  const body = (groupId: number) => ({
    dataset_group_id: groupId,
    filter_group: search.filter_group ?? null,
    q: search.q || null,
    variables_to_parse: columns.trim() ? columns.split(",").map((c) => c.trim()).filter(Boolean) : null,
  });
  const fail = (e: Error) => setFailure(e);
  return (
    <Section title="Make a dataset from these results" actions={<button type="button" onClick={onClose}>Close</button>}>
      <div data-testid="dataset-from-search">
        <GroupPick value={group} onPick={(g) => { setGroup(g); setPreview(null); setQueued(null); }} />
        <FieldError failure={failure} at="dataset_group_id" />
        <div class="form-line">
          <label>
            Columns (request fields or input variables, comma-separated; empty: the default ones)
            <input aria-label="Columns" size={50} value={columns} onInput={onText(setColumns)} placeholder="question, output" />
            <FieldError failure={failure} at="variables_to_parse" />
          </label>
          <button type="button" disabled={group === null} onClick={() => group !== null && post("/api/public/v2/dataset-versions/from-filter-params/preview", body(group)).then((p) => { setFailure(null); setPreview(p); }, fail)}>
            Preview
          </button>
          <button
            type="button"
            class="primary"
            disabled={!preview}
            onClick={() => group !== null && post("/api/public/v2/dataset-versions/from-filter-params", body(group)).then((q) => { setFailure(null); setQueued(q); }, fail)}
          >
            Fill the dataset
          </button>
        </div>
        <WriteError failure={failure} shown={["dataset_group_id", "variables_to_parse"]} />
        {preview ? (
          <div data-testid="dataset-preview">
            <p>
              <b>{preview.total_matching}</b> requests match; a fill adds <b data-testid="rows-to-add">{preview.rows_to_add}</b> rows. The first {preview.rows.length}:
            </p>
            <div class="scroll">
              <table class="grid sheet-grid">
                <thead>
                  <tr>
                    {preview.columns.map((c) => (
                      <th key={c}>{c}</th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {preview.rows.map((row, i) => (
                    <tr key={i}>
                      {row.map((cell, j) => (
                        <td key={j} class="cell">
                          <span class="cell-value">{fmt.value(cell.value)}</span>
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </div>
        ) : null}
        {queued ? (
          <p data-testid="dataset-queued">
            Filling the draft of the dataset (version {queued.version_number === -1 ? "draft" : queued.version_number}):{" "}
            <a href={href("datasets", queued.dataset_id)}>open it</a>.
          </p>
        ) : null}
      </div>
    </Section>
  );
}

/** Adds one request to a dataset's draft, scores it and gives it metadata (the tracking API). */
export function RequestActions({ requestId, onChange }: { requestId: number; onChange: () => void }) {
  const [group, setGroup] = useState<number | null>(null);
  const [added, setAdded] = useState<number | null>(null);
  const [scoreName, setScoreName] = useState("");
  const [score, setScore] = useState("");
  const [key, setKey] = useState("");
  const [value, setValue] = useState("");
  const [failure, setFailure] = useState<{ what: "dataset" | "score" | "metadata"; error: Error } | null>(null);
  const failed = (what: "dataset" | "score" | "metadata") => (error: Error) => setFailure({ what, error });
  const shown = (what: "dataset" | "score" | "metadata") => (failure?.what === what ? failure.error : null);
  const done = () => {
    setFailure(null);
    onChange();
  };
  return (
    <Section title="Work on this request">
      <div data-testid="request-actions">
        <h3>Add to a dataset</h3>
        <GroupPick value={group} onPick={setGroup} />
        <div class="form-line">
          <button
            type="button"
            disabled={group === null}
            onClick={() =>
              group !== null &&
              post("/api/public/v2/dataset-versions/add-request-log", { dataset_group_id: group, request_log_id: requestId }).then((d) => {
                setAdded(d.draft_dataset_id);
                done();
              }, failed("dataset"))
            }
          >
            Add to the dataset's draft
          </button>
          {added !== null ? (
            <span data-testid="added-to-dataset">
              Added to <a href={href("datasets", added)}>the draft</a>.
            </span>
          ) : null}
        </div>
        <FieldError failure={shown("dataset")} at="dataset_group_id" />
        <WriteError failure={shown("dataset")} shown={["dataset_group_id"]} />

        <h3>Score</h3>
        <form
          class="form-line"
          onSubmit={(e) => {
            e.preventDefault();
            // An empty field is no score (Number("") would save a 0).
            if (!score.trim()) return;
            const body: TrackScore = { request_id: requestId, score: Number(score), name: scoreName.trim() || null };
            post("/rest/track-score", body).then(done, failed("score"));
          }}
        >
          <label>
            Name
            <input aria-label="Score name" value={scoreName} onInput={onText(setScoreName)} placeholder="default" />
            <FieldError failure={shown("score")} at="name" />
          </label>
          <label>
            Score (0 to 100)
            <input aria-label="Score" inputMode="numeric" size={6} value={score} onInput={onText(setScore)} />
            <FieldError failure={shown("score")} at="score" />
          </label>
          <button type="submit" disabled={!score.trim()}>
            Save score
          </button>
        </form>
        <WriteError failure={shown("score")} shown={["name", "score"]} />

        <h3>Metadata</h3>
        <form
          class="form-line"
          onSubmit={(e) => {
            e.preventDefault();
            const body: TrackMetadata = { request_id: requestId, metadata: { [key]: value } };
            post("/rest/track-metadata", body).then(() => {
              setKey("");
              setValue("");
              done();
            }, failed("metadata"));
          }}
        >
          <label>
            Key
            <input aria-label="Metadata key" value={key} onInput={onText(setKey)} />
          </label>
          <label>
            Value
            <input aria-label="Metadata value" value={value} onInput={onText(setValue)} />
          </label>
          <button type="submit">Add metadata</button>
          <FieldError failure={shown("metadata")} at="metadata" />
        </form>
        <WriteError failure={shown("metadata")} shown={["metadata"]} />
      </div>
    </Section>
  );
}
