// Datasets (versions with their fill status and rows; a new one from a CSV or JSON file) and
// evaluations (pipelines built from column forms, their runs, a run's score summary, status and rows
// with each evaluated cell's status). Everything is named by its name, never by a bare id.
import { useState } from "preact/hooks";
import { get, post } from "../api";
import type { Dataset, EvaluationColumnDefinition, EvaluationRowsResponse } from "../api.gen";
import { go, href } from "../router";
import { EmptyState, ErrorBox, FieldError, fmt, ListTable, Loading, PageError, Pager, Section, Status, useAsync, useInterval, onText, WriteError } from "../ui";
import { ColumnForm, type ColumnDraft } from "./column-form";
import { NewDataset } from "./new-dataset";

/** The workspace's datasets by id (the newest 100), for naming them where a page holds only an id. */
const useDatasets = () => useAsync(() => get("/api/public/v2/datasets", { per_page: 100, sort_by: "updated_at" }), []);
const datasetName = (list: Dataset[] | undefined, id: number) => {
  const d = list?.find((x) => x.id === id);
  return d ? `${d.dataset_group.name} (${d.version_number === -1 ? "draft" : `v${d.version_number}`})` : `dataset ${id}`;
};

export function DatasetsView() {
  const [page, setPage] = useState(1);
  const list = useAsync(() => get("/api/public/v2/datasets", { page, per_page: 25 }), [page]);
  const [making, setMaking] = useState(false);
  const newButton = (
    <button type="button" class="primary" onClick={() => setMaking(true)}>
      + New dataset
    </button>
  );
  return (
    <Section title="Datasets" actions={making ? null : newButton}>
      {making ? <NewDataset onClose={() => setMaking(false)} /> : null}
      <ListTable
        list={list}
        items={(d) => d.datasets}
        columns={[{ title: "dataset" }, { title: "version", num: true }, { title: "columns" }, { title: "fill" }, { title: "updated" }]}
        empty="No dataset yet: upload a CSV or JSON file, or make one from a search of the requests."
        emptyAction={making ? undefined : newButton}
        row={(d) => (
          <tr key={d.id}>
            <td>
              <a href={href("datasets", d.id)}>{d.dataset_group?.name ?? `dataset ${d.dataset_group_id}`}</a>
            </td>
            <td class="num">{d.version_number === -1 ? "draft" : `v${d.version_number}`}</td>
            <td>{(d.column_names ?? []).join(", ")}</td>
            <td>
              <Status value={d.job_status} />
            </td>
            <td>{fmt.time(d.updated_at)}</td>
          </tr>
        )}
        footer={(d) => (d.total ? <Pager page={d.page} pages={d.pages} total={d.total} onPage={setPage} /> : null)}
      />
    </Section>
  );
}

/** A dataset's rows, or an evaluation's (whose eval cells carry their status). */
function RowsGrid({ columns, rows }: { columns: string[]; rows: EvaluationRowsResponse["rows"] }) {
  return (
    <div class="scroll">
      <table class="grid sheet-grid">
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th key={i}>{c}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i}>
              {row.map((cell, j) => (
                <td key={j} class={cell?.type === "eval" ? `cell cell-${String(cell.status ?? "").toLowerCase()}` : "cell"} data-status={cell?.type === "eval" ? cell.status : undefined}>
                  <span class="cell-value">{fmt.value(cell?.value)}</span>
                  {cell?.type === "eval" && cell.status !== "COMPLETED" ? <Status value={cell.status} /> : null}
                  {cell?.type === "eval" && cell.error_message ? <span class="cell-error">{cell.error_message}</span> : null}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function DatasetDetail({ id }: { id: string }) {
  const [page, setPage] = useState(1);
  const rows = useAsync(() => get("/api/public/v2/datasets/{dataset_id}/rows", { dataset_id: id }, { page, per_page: 50 }), [id, page]);
  const datasets = useDatasets();
  if (rows.error) return <PageError error={rows.error} back={{ href: href("datasets"), label: "All datasets" }} retry={rows.reload} />;
  return (
    <div class="detail">
      <p>
        <a href={href("datasets")}>‹ All datasets</a>
      </p>
      <Section title={datasetName(datasets.data?.datasets, Number(id))}>
        {rows.data && rows.data.total === 0 ? <EmptyState text="This dataset has no row yet (a fill may still be running)." action={<button type="button" onClick={rows.reload}>Refresh</button>} /> : null}
        {rows.data ? (
          <>
            <RowsGrid columns={rows.data.columns} rows={rows.data.rows} />
            <Pager page={rows.data.page} pages={rows.data.pages} total={rows.data.total} onPage={setPage} />
          </>
        ) : (
          <Loading />
        )}
      </Section>
    </div>
  );
}

export function EvaluationsView() {
  const [page, setPage] = useState(1);
  const list = useAsync(() => get("/api/public/v2/evaluations", { page, per_page: 25, include_runs: true }), [page]);
  const datasets = useDatasets();
  const [making, setMaking] = useState(false);
  const names = new Map((list.data?.evaluations ?? []).map((e) => [e.id, e.name]));
  const newButton = (
    <button type="button" class="primary" onClick={() => setMaking(true)}>
      + New pipeline
    </button>
  );
  return (
    <>
      {making ? <NewPipeline onClose={() => setMaking(false)} /> : null}
      <Section title="Evaluations" actions={making ? null : newButton}>
        <ListTable
          list={list}
          items={(d) => d.evaluations}
          columns={[{ title: "name" }, { title: "kind" }, { title: "dataset" }, { title: "runs" }, { title: "created" }]}
          empty="No evaluation yet: a pipeline scores every row of a dataset with columns you choose."
          emptyAction={making ? undefined : newButton}
          row={(e) => (
            <tr key={e.id}>
              <td>
                <a href={href("evaluations", e.id)}>{e.name}</a>
              </td>
              <td>
                {e.is_blueprint ? (
                  "pipeline"
                ) : (
                  <>
                    run of <a href={href("evaluations", e.parent_report_id ?? "")}>{names.get(e.parent_report_id ?? 0) ?? "its pipeline"}</a>
                  </>
                )}
              </td>
              <td>
                <a href={href("datasets", e.dataset_id)}>{datasetName(datasets.data?.datasets, e.dataset_id)}</a>
              </td>
              <td>{e.is_blueprint ? (e.run_count ? `${e.run_count} run${e.run_count === 1 ? "" : "s"}` : <span class="muted">never run</span>) : ""}</td>
              <td>{fmt.time(e.created_at)}</td>
            </tr>
          )}
          footer={(d) => (d.total ? <Pager page={d.page} pages={d.pages} total={d.total} onPage={setPage} /> : null)}
        />
      </Section>
    </>
  );
}

/** A new pipeline: a name, a dataset (its newest saved version), and columns built with the column forms. */
function NewPipeline({ onClose }: { onClose: () => void }) {
  const datasets = useDatasets();
  const [name, setName] = useState("");
  const [group, setGroup] = useState("");
  const [columns, setColumns] = useState<ColumnDraft[]>([]);
  const [failure, setFailure] = useState<Error | null>(null);
  // A pipeline runs on a saved version: the groups that have one, each with its newest version's columns.
  const saved = new Map<number, Dataset>();
  for (const d of datasets.data?.datasets ?? []) {
    if (d.version_number < 1) continue;
    const seen = saved.get(d.dataset_group_id);
    if (!seen || seen.version_number < d.version_number) saved.set(d.dataset_group_id, d);
  }
  const chosen = group ? saved.get(Number(group)) : undefined;
  const inputs = [...(chosen?.column_names ?? []), ...columns.map((c) => c.title)];
  const body = (): { dataset_group_id: number; name: string; columns: EvaluationColumnDefinition[] } => ({
    dataset_group_id: Number(group),
    name,
    columns: columns.map((c) => ({ column_type: c.type, name: c.title, configuration: c.config, is_part_of_score: true })),
  });
  return (
    <Section title="New evaluation pipeline" actions={<button type="button" onClick={onClose}>Cancel</button>}>
      <div data-testid="new-pipeline">
        <div class="form-line">
          <label>
            Name
            <input aria-label="Pipeline name" value={name} onInput={onText(setName)} placeholder="e.g. Answer quality" />
            <FieldError failure={failure} at="name" />
          </label>
          <label>
            Dataset
            <select aria-label="Pipeline dataset" value={group} onChange={onText(setGroup)}>
              <option value="">choose…</option>
              {[...saved.values()].map((d) => (
                <option key={d.dataset_group_id} value={String(d.dataset_group_id)}>
                  {d.dataset_group.name} (v{d.version_number})
                </option>
              ))}
            </select>
            <FieldError failure={failure} at="dataset_group_id" />
          </label>
        </div>
        {datasets.data && saved.size === 0 ? <EmptyState text="No dataset has a saved version yet: make a dataset first." action={<a class="button" href={href("datasets")}>Datasets</a>} /> : null}
        {columns.length ? (
          <ol class="pipeline-columns" data-testid="pipeline-columns">
            {columns.map((c, i) => (
              <li key={i}>
                <b>{c.title}</b> <span class="muted">{c.type}</span>{" "}
                <button type="button" class="icon" aria-label={`Remove column ${c.title}`} onClick={() => setColumns(columns.filter((_, j) => j !== i))}>
                  ×
                </button>
              </li>
            ))}
          </ol>
        ) : (
          <p class="muted">Add the columns that score each row: each reads the dataset's columns or an earlier column, and counts toward the score.</p>
        )}
        {chosen ? (
          <ColumnForm
            testId="pipeline-column-form"
            columns={inputs}
            submitLabel="Add to the pipeline"
            submit={async (c) => {
              if (!c.title.trim()) return new Error("the column needs a title");
              setColumns([...columns, c]);
              return null;
            }}
          />
        ) : null}
        <WriteError failure={failure} shown={["name", "dataset_group_id"]} />
        <button
          type="button"
          class="primary"
          disabled={!group || columns.length === 0}
          onClick={() =>
            post("/reports", body()).then(
              (r) => go("evaluations", r.report_id),
              (e: Error) => setFailure(e),
            )
          }
        >
          Create the pipeline
        </button>
      </div>
    </Section>
  );
}

/** A run's score: the overall figure and each scored column's. */
function ScoreSummary({ runId, done }: { runId: number; done: boolean }) {
  const score = useAsync(() => get("/reports/{report_id}/score", { report_id: runId }), [runId, done]);
  if (!score.data) return score.error ? <ErrorBox error={score.error} /> : null;
  const s = score.data.score;
  const details = s.details as { columns?: { column_name: string; score: number | null; num_skipped: number }[]; column_name?: string; score?: number | null; num_skipped?: number };
  const columns = details.columns ?? (details.column_name ? [{ column_name: details.column_name, score: details.score ?? null, num_skipped: details.num_skipped ?? 0 }] : []);
  return (
    <div class="score-summary" data-testid="score-summary">
      <div class="score-big">
        <b data-testid="overall-score">{s.overall_score === null ? "—" : `${Math.round(s.overall_score * 10) / 10}`}</b>
        <span class="muted">{s.overall_score === null ? (done ? "no score: no scored cell holds a boolean or number" : "scoring once the run is done") : "out of 100"}</span>
      </div>
      {columns.length ? (
        <table class="grid compact">
          <tbody>
            {columns.map((c) => (
              <tr key={c.column_name}>
                <td>{c.column_name}</td>
                <td class="num">{c.score === null ? "—" : Math.round(c.score * 10) / 10}</td>
                <td class="muted">{c.num_skipped ? `${c.num_skipped} skipped` : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

export function EvaluationDetail({ id }: { id: string }) {
  const [page, setPage] = useState(1);
  const report = useAsync(() => get("/reports/{report_id}", { report_id: id }), [id]);
  const rows = useAsync(() => get("/api/public/v2/evaluations/{evaluation_id}/rows", { evaluation_id: id }, { page, per_page: 50 }), [id, page]);
  const datasets = useDatasets();
  const parentId = report.data?.report.parent_report_id ?? null;
  const parent = useAsync(() => (parentId ? get("/reports/{report_id}", { report_id: parentId }) : Promise.resolve(null)), [parentId]);
  const runs = useAsync(() => (report.data?.report.is_blueprint ? get("/api/public/v2/evaluations", { per_page: 100, include_runs: true }) : Promise.resolve(null)), [report.data?.report.is_blueprint]);
  const status: string | undefined = report.data?.status;
  const isRun = report.data ? !report.data.report.is_blueprint : false;
  const running = isRun && status !== undefined && !["COMPLETED", "FAILED", "CANCELED", "CANCELLED"].includes(status);
  useInterval(
    () => {
      report.reload();
      rows.reload();
    },
    1500,
    running,
  );
  if (report.error) return <PageError error={report.error} back={{ href: href("evaluations"), label: "All evaluations" }} retry={report.reload} />;
  if (!report.data) return <Loading />;
  const r = report.data.report;
  const counts: Record<string, number> = report.data.stats?.status_counts ?? {};
  const pipelineRuns = runs.data?.evaluations.find((e) => e.id === r.id)?.runs ?? [];
  return (
    <div class="detail">
      <p>
        <a href={href("evaluations")}>‹ All evaluations</a>
      </p>
      {/* A pipeline has no status of its own: only its runs do. */}
      <Section title={r.name} actions={isRun ? <Status value={status} /> : <span class="muted">{pipelineRuns.length ? `${pipelineRuns.length} run${pipelineRuns.length === 1 ? "" : "s"}` : "never run"}</span>}>
        <p data-testid="run-status">
          {isRun ? (
            <>
              Run of the pipeline <a href={href("evaluations", r.parent_report_id ?? "")}>{parent.data?.report.name ?? "…"}</a>
            </>
          ) : (
            "Pipeline"
          )}{" "}
          over <a href={href("datasets", r.dataset_id)}>{datasetName(datasets.data?.datasets, r.dataset_id)}</a>
          {isRun && Object.keys(counts).length ? " · " : ""}
          {isRun
            ? Object.entries(counts).map(([k, v]) => (
                <span key={k} class={`count status-${k.toLowerCase()}`}>
                  {k.toLowerCase()} {v}
                </span>
              ))
            : null}
        </p>
        {isRun ? <ScoreSummary runId={r.id} done={!running} /> : <StartRun pipelineId={r.id} />}
        {!isRun && pipelineRuns.length ? (
          <ul class="runs">
            {pipelineRuns.map((run) => (
              <li key={run.id}>
                <a href={href("evaluations", run.id)}>{run.name}</a> <Status value={run.status} /> <span class="muted">{fmt.time(run.created_at)}</span>
              </li>
            ))}
          </ul>
        ) : null}
        <p class="muted">
          Columns:{" "}
          {(report.data.report_columns ?? []).map((c) => (
            <span key={c.id} class="tag">
              {c.name} ({c.column_type})
            </span>
          ))}
        </p>
        <ErrorBox error={rows.error} />
        {rows.data && isRun ? (
          <>
            <RowsGrid columns={rows.data.columns} rows={rows.data.rows} />
            <Pager page={rows.data.page} pages={rows.data.pages} total={rows.data.total} onPage={setPage} />
          </>
        ) : null}
      </Section>
    </div>
  );
}

/** Starts a run of a pipeline over its dataset (POST /reports/{id}/run) and opens it to watch it progress. */
function StartRun({ pipelineId }: { pipelineId: number }) {
  const [name, setName] = useState(() => `run ${new Date().toISOString().slice(0, 16).replace("T", " ")}`);
  const [failure, setFailure] = useState<Error | null>(null);
  return (
    <form
      class="form-line"
      data-testid="start-run"
      onSubmit={(e) => {
        e.preventDefault();
        post("/reports/{report_id}/run", { report_id: pipelineId }, { name }).then(
          (run) => go("evaluations", run.report_id),
          (err: Error) => setFailure(err),
        );
      }}
    >
      <label>
        Run name
        <input aria-label="Run name" size={30} value={name} onInput={onText(setName)} />
        <FieldError failure={failure} at="name" />
      </label>
      <button type="submit" class="primary">
        Start a run
      </button>
      <WriteError failure={failure} shown={["name"]} />
    </form>
  );
}
