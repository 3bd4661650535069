// Datasets (versions with their fill status and rows) and evaluations (pipelines, their runs, a run's
// status and rows with each evaluated cell's status).
import { useState } from "preact/hooks";
import { get, post } from "../api";
import type { EvaluationRowsResponse } from "../api.gen";
import { go, href } from "../router";
import { ErrorBox, FieldError, fmt, ListTable, Loading, Pager, Section, Status, useAsync, useInterval, onText, WriteError } from "../ui";

export function DatasetsView() {
  const [page, setPage] = useState(1);
  const list = useAsync(() => get("/api/public/v2/datasets", { page, per_page: 25 }), [page]);
  return (
    <Section title="Datasets">
      <ListTable
        list={list}
        items={(d) => d.datasets}
        columns={[{ title: "dataset" }, { title: "version", num: true }, { title: "columns" }, { title: "fill" }, { title: "updated" }]}
        empty="No dataset."
        row={(d) => (
          <tr key={d.id}>
            <td>
              <a href={href("datasets", d.id)}>{d.dataset_group?.name ?? `#${d.dataset_group_id}`}</a>
            </td>
            <td class="num">{d.version_number === -1 ? "draft" : `v${d.version_number}`}</td>
            <td>{(d.column_names ?? []).join(", ")}</td>
            <td>
              <Status value={d.job_status} />
            </td>
            <td>{fmt.time(d.updated_at)}</td>
          </tr>
        )}
        footer={(d) => <Pager page={d.page} pages={d.pages} total={d.total} onPage={setPage} />}
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
  return (
    <div class="detail">
      <p>
        <a href={href("datasets")}>‹ All datasets</a>
      </p>
      <Section title={`Dataset #${id}`}>
        <ErrorBox error={rows.error} />
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
  return (
    <Section title="Evaluations">
      <ListTable
        list={list}
        items={(d) => d.evaluations}
        columns={[{ title: "name" }, { title: "kind" }, { title: "dataset" }, { title: "created" }]}
        empty="No evaluation."
        row={(e) => (
          <tr key={e.id}>
            <td>
              <a href={href("evaluations", e.id)}>{e.name}</a>
            </td>
            <td>{e.is_blueprint ? "pipeline" : `run of #${e.parent_report_id}`}</td>
            <td>
              <a href={href("datasets", e.dataset_id)}>#{e.dataset_id}</a>
            </td>
            <td>{fmt.time(e.created_at)}</td>
          </tr>
        )}
        footer={(d) => <Pager page={d.page} pages={d.pages} total={d.total} onPage={setPage} />}
      />
    </Section>
  );
}

export function EvaluationDetail({ id }: { id: string }) {
  const [page, setPage] = useState(1);
  const report = useAsync(() => get("/reports/{report_id}", { report_id: id }), [id]);
  const rows = useAsync(() => get("/api/public/v2/evaluations/{evaluation_id}/rows", { evaluation_id: id }, { page, per_page: 50 }), [id, page]);
  const status: string | undefined = report.data?.status;
  const running = status !== undefined && !["COMPLETED", "FAILED", "CANCELED", "CANCELLED"].includes(status) && !report.data?.report?.is_blueprint;
  useInterval(
    () => {
      report.reload();
      rows.reload();
    },
    1500,
    running,
  );
  if (report.error) return <ErrorBox error={report.error} />;
  if (!report.data) return <Loading />;
  const r = report.data.report;
  const counts: Record<string, number> = report.data.stats?.status_counts ?? {};
  return (
    <div class="detail">
      <p>
        <a href={href("evaluations")}>‹ All evaluations</a>
      </p>
      <Section title={r.name} actions={<Status value={status} />}>
        <p data-testid="run-status">
          {r.is_blueprint ? "Pipeline" : `Run of pipeline #${r.parent_report_id}`} over dataset <a href={href("datasets", r.dataset_id)}>#{r.dataset_id}</a>
          {Object.keys(counts).length ? " · " : ""}
          {Object.entries(counts).map(([k, v]) => (
            <span key={k} class={`count status-${k.toLowerCase()}`}>
              {k.toLowerCase()} {v}
            </span>
          ))}
          {r.score?.overall_score !== null && r.score?.overall_score !== undefined ? ` · score ${r.score.overall_score}` : ""}
        </p>
        {r.is_blueprint ? <StartRun pipelineId={r.id} /> : null}
        <p class="muted">
          Columns:{" "}
          {(report.data.report_columns ?? []).map((c) => (
            <span key={c.id} class="tag">
              {c.name} ({c.column_type})
            </span>
          ))}
        </p>
        <ErrorBox error={rows.error} />
        {rows.data ? (
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
