// Tables: the tables, one table's sheets, and a sheet as a grid whose cells show their status
// (STALE, QUEUED, RUNNING, COMPLETED, FAILED); refreshed every second while an operation runs.
import { useState } from "preact/hooks";
import { get, patch, post } from "../api";
import type { Cell, Column, CreateColumnRequest } from "../api.gen";
import { TYPE_FORMS } from "../column-forms";
import { go, href } from "../router";
import { EmptyState, ErrorBox, FieldError, fmt, ListTable, Loading, PageError, SearchLine, Section, Status, useAsync, useInterval, onText, WriteError } from "../ui";
import { ColumnForm } from "./column-form";

/** A new table, with its first sheet: made, it opens. */
function NewTable({ onClose }: { onClose: () => void }) {
  const [title, setTitle] = useState("");
  const [failure, setFailure] = useState<Error | null>(null);
  return (
    <form
      class="form-line"
      data-testid="new-table"
      onSubmit={(e) => {
        e.preventDefault();
        post("/api/public/v2/tables", { title, create_default_sheet: true }).then(
          (t) => go("tables", t.table.id),
          (err: Error) => setFailure(err),
        );
      }}
    >
      <label>
        Title
        <input aria-label="Table title" value={title} onInput={onText(setTitle)} placeholder="e.g. Support answers" />
        <FieldError failure={failure} at="title" />
      </label>
      <button type="submit" class="primary">
        Create table
      </button>
      <button type="button" onClick={onClose}>
        Cancel
      </button>
      <WriteError failure={failure} shown={["title"]} />
    </form>
  );
}

/** A sheet's place in the API's paths. */
interface SheetIds {
  table_id: string;
  sheet_id: string;
}

export function TablesView() {
  const [cursor, setCursor] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const list = useAsync(() => get("/api/public/v2/tables", { limit: 50, cursor, name: query }), [cursor, query]);
  const [making, setMaking] = useState(false);
  const newButton = (
    <button type="button" class="primary" onClick={() => setMaking(true)}>
      + New table
    </button>
  );
  return (
    <Section title="Tables" actions={making ? null : newButton}>
      {making ? <NewTable onClose={() => setMaking(false)} /> : null}
      <SearchLine
        label="Title"
        placeholder="Title contains"
        onSearch={(text) => {
          setCursor(null);
          setQuery(text);
        }}
      />
      <ListTable
        list={list}
        items={(d) => d.data}
        columns={[{ title: "title" }, { title: "sheets", num: true }, { title: "created" }]}
        empty={query ? "No table has that title." : "No table yet: a table holds rows whose columns compute (counts, checks, LLM calls)."}
        emptyAction={making ? undefined : newButton}
        row={(t) => (
          <tr key={t.id}>
            <td>
              <a href={href("tables", t.id)}>{t.title}</a>
            </td>
            <td class="num">{t.sheet_count}</td>
            <td>{fmt.time(t.created_at)}</td>
          </tr>
        )}
        footer={(d) => (
          <div class="pager">
            {cursor ? (
              <button type="button" onClick={() => setCursor(null)}>
                « First page
              </button>
            ) : null}
            {d.has_more ? (
              <button type="button" onClick={() => setCursor(d.next_cursor)}>
                Next ›
              </button>
            ) : null}
          </div>
        )}
      />
    </Section>
  );
}

export function TableDetail({ tableId, sheetId }: { tableId: string; sheetId: string | null }) {
  const table = useAsync(() => get("/api/public/v2/tables/{table_id}", { table_id: tableId }), [tableId]);
  const sheets = useAsync(() => get("/api/public/v2/tables/{table_id}/sheets", { table_id: tableId }, { limit: 100 }), [tableId]);
  if (table.error || sheets.error) return <PageError error={(table.error ?? sheets.error)!} back={{ href: href("tables"), label: "All tables" }} retry={() => (table.reload(), sheets.reload())} />;
  if (!table.data || !sheets.data) return <Loading />;
  const list = sheets.data.data;
  const current = sheetId ?? list[0]?.id ?? null;
  const t = table.data.table;
  return (
    <div class="detail">
      <p>
        <a href={href("tables")}>‹ All tables</a>
      </p>
      <Section title={t.title}>
        <nav class="tabs">
          {list.map((s) => (
            <a key={s.id} href={href("tables", tableId, s.id)} class={s.id === current ? "active" : ""}>
              {s.title}
            </a>
          ))}
        </nav>
        {current ? <SheetGrid key={current} tableId={tableId} sheetId={current} /> : <EmptyState text="This table has no sheet yet: import a CSV through the API, or add one." />}
      </Section>
    </div>
  );
}

const ACTIVE = new Set(["QUEUED", "RUNNING"]);

function SheetGrid({ tableId, sheetId }: { tableId: string; sheetId: string }) {
  const ids: SheetIds = { table_id: tableId, sheet_id: sheetId };
  const [cursor, setCursor] = useState<string | null>(null);
  const rows = useAsync(() => get("/api/public/v2/tables/{table_id}/sheets/{sheet_id}/rows", ids, { include_columns: true, limit: 100, cursor }), [tableId, sheetId, cursor]);
  const ops = useAsync(() => get("/api/public/v2/tables/{table_id}/sheets/{sheet_id}/operations", ids), [tableId, sheetId]);
  const [error, setError] = useState<string | null>(null);
  const counts = ops.data?.status_counts ?? {};
  const running = (ops.data?.active_operations?.length ?? 0) > 0 || (counts.QUEUED ?? 0) + (counts.RUNNING ?? 0) > 0;
  useInterval(
    () => {
      rows.reload();
      ops.reload();
    },
    1000,
    running,
  );
  const recalc = (statuses?: Cell["status"][]) =>
    post("/api/public/v2/tables/{table_id}/sheets/{sheet_id}/operations", ids, { operation: "recalculate", ...(statuses ? { statuses } : {}) }).then(
      () => {
        setError(null);
        ops.reload();
        rows.reload();
      },
      (e: Error) => setError(e.message),
    );
  const edited = () => {
    rows.reload();
    ops.reload();
  };
  if (rows.error) return <PageError error={rows.error} back={{ href: href("tables"), label: "All tables" }} retry={rows.reload} />;
  if (!rows.data) return <Loading />;
  const columns = rows.data.columns ?? [];
  const next = rows.data.next_cursor;
  // A failure every failed cell of a column shares is said once, above the grid, not in each cell.
  const shared = new Map<string, { error: string; count: number }>();
  for (const c of columns) {
    const failed = rows.data.data.map((r) => r.cells?.[c.id]).filter((cell) => cell?.status === "FAILED");
    const first = failed[0]?.error;
    if (failed.length >= 2 && first && failed.every((cell) => cell?.error === first)) shared.set(c.id, { error: first, count: failed.length });
  }
  return (
    <div data-testid="sheet">
      <div class="sheet-bar">
        <span data-testid="status-counts">
          {ops.data
            ? ["STALE", "QUEUED", "RUNNING", "COMPLETED", "FAILED"].map((s) => (
                <span key={s} class={`count status-${s.toLowerCase()}`}>
                  {s.toLowerCase()} {counts[s] ?? 0}
                </span>
              ))
            : "counting…"}
        </span>
        <span class="muted">
          {rows.data.row_count} rows · version {rows.data.version}
          {running ? " · running, refreshing" : ""}
        </span>
        <button type="button" disabled={!counts.STALE} onClick={() => recalc(["STALE"])}>
          Recalculate stale
        </button>
        <button type="button" onClick={() => recalc()}>
          Recalculate all
        </button>
      </div>
      <ErrorBox error={error} />
      {[...shared].map(([id, f]) => (
        <div key={id} class="callout bad" role="alert" data-testid="column-failure">
          <b>{columns.find((c) => c.id === id)?.title}</b>: all {f.count} failed cells fail the same way: {f.error}
        </div>
      ))}
      <div class="scroll">
        <table class="grid sheet-grid">
          <thead>
            <tr>
              <th class="num">#</th>
              {columns.map((c) => (
                <th key={c.id} data-column={c.title}>
                  <span class="col-title">{c.title}</span>
                  <span class="col-type" title={c.type}>
                    {TYPE_FORMS[c.type as keyof typeof TYPE_FORMS]?.label ?? c.type}
                  </span>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.data.data.map((r) => (
              <tr key={r.row_index}>
                <td class="num muted">{r.row_index}</td>
                {columns.map((c) => {
                  const cell = r.cells?.[c.id];
                  const status: string = cell?.status ?? "";
                  const computed = c.type !== "TEXT";
                  if (!computed && cell) return <TextCell key={c.id} ids={ids} cell={cell} onEdited={edited} />;
                  return (
                    <td
                      key={c.id}
                      class={`cell ${computed ? `cell-${status.toLowerCase()}` : ""} ${ACTIVE.has(status) ? "busy" : ""}`}
                      data-status={computed ? status : undefined}
                      title={cell?.error ?? (computed ? status : undefined)}
                    >
                      <span class="cell-value">{fmt.value(cell?.display_value ?? cell?.value)}</span>
                      {computed && status && status !== "COMPLETED" ? <Status value={status} /> : null}
                      {cell?.error && !shared.has(c.id) ? <span class="cell-error">{cell.error}</span> : null}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {rows.data.data.length === 0 ? <EmptyState text="This sheet has no row yet: rows come from an import or the API." /> : null}
      <AddColumn ids={ids} columns={columns} onAdded={edited} />
      <div class="pager">
        {cursor ? (
          <button type="button" onClick={() => setCursor(null)}>
            « First rows
          </button>
        ) : null}
        {rows.data.has_more ? (
          <button type="button" onClick={() => setCursor(next)}>
            Next rows ›
          </button>
        ) : null}
      </div>
    </div>
  );
}

/** A text cell: its value, edited in place (PATCH …/cells/{id}); what depends on it goes stale. */
function TextCell({ ids, cell, onEdited }: { ids: SheetIds; cell: Cell; onEdited: () => void }) {
  const [editing, setEditing] = useState<string | null>(null);
  const [failure, setFailure] = useState<Error | null>(null);
  const text = fmt.value(cell.display_value ?? cell.value);
  const save = (value: string) =>
    patch("/api/public/v2/tables/{table_id}/sheets/{sheet_id}/cells/{cell_id}", { ...ids, cell_id: cell.id }, { display_value: value }).then(
      () => {
        setEditing(null);
        setFailure(null);
        onEdited();
      },
      (e: Error) => setFailure(e),
    );
  if (editing === null)
    return (
      <td class="cell editable" data-cell-id={cell.id} title="Click to edit" onClick={() => setEditing(text)}>
        <span class="cell-value">{text}</span>
      </td>
    );
  return (
    <td class="cell editable" data-cell-id={cell.id}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          save(editing);
        }}
      >
        <input aria-label="Cell value" value={editing} onInput={(e) => setEditing((e.target as HTMLInputElement).value)} onKeyDown={(e) => e.key === "Escape" && setEditing(null)} />
      </form>
      <FieldError failure={failure} at="display_value" />
      <WriteError failure={failure} shown={["display_value"]} />
    </td>
  );
}

/** Adds a column (POST …/columns) through its type's form. */
function AddColumn({ ids, columns, onAdded }: { ids: SheetIds; columns: Column[]; onAdded: () => void }) {
  const [open, setOpen] = useState(false);
  if (!open)
    return (
      <p>
        <button type="button" onClick={() => setOpen(true)}>
          + Add a column
        </button>
      </p>
    );
  return (
    <Section title="Add a column" actions={<button type="button" onClick={() => setOpen(false)}>Close</button>}>
      <ColumnForm
        testId="add-column"
        columns={columns.map((c) => c.title)}
        submitLabel="Add column"
        submit={(c) =>
          post("/api/public/v2/tables/{table_id}/sheets/{sheet_id}/columns", ids, { title: c.title, type: c.type, config: c.config as CreateColumnRequest["config"] }).then(
            () => {
              onAdded();
              return null;
            },
            (err: Error) => err,
          )
        }
      />
    </Section>
  );
}
