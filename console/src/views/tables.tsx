// Tables: the tables, one table's sheets, and a sheet as a grid whose cells show their status
// (STALE, QUEUED, RUNNING, COMPLETED, FAILED); refreshed every second while an operation runs.
import { useState } from "preact/hooks";
import { get, patch, post } from "../api";
import type { Cell, Column, CreateColumnRequest } from "../api.gen";
import { href } from "../router";
import { ErrorBox, FieldError, fmt, ListTable, Loading, SearchLine, Section, Status, useAsync, useInterval, WriteError } from "../ui";

/** A sheet's place in the API's paths. */
interface SheetIds {
  table_id: string;
  sheet_id: string;
}

export function TablesView() {
  const [cursor, setCursor] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const list = useAsync(() => get("/api/public/v2/tables", { limit: 50, cursor, name: query }), [cursor, query]);
  return (
    <Section title="Tables">
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
        empty="No table."
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
  if (table.error || sheets.error) return <ErrorBox error={table.error ?? sheets.error} />;
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
        {current ? <SheetGrid key={current} tableId={tableId} sheetId={current} /> : <p class="muted">No sheet.</p>}
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
  if (rows.error) return <ErrorBox error={rows.error} />;
  if (!rows.data) return <Loading />;
  const columns = rows.data.columns ?? [];
  const next = rows.data.next_cursor;
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
      <div class="scroll">
        <table class="grid sheet-grid">
          <thead>
            <tr>
              <th class="num">#</th>
              {columns.map((c) => (
                <th key={c.id}>
                  {c.title} <span class="muted">{c.type}</span>
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
                      {cell?.error ? <span class="cell-error">{cell.error}</span> : null}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
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

// Every type a column can have, offered in its type box: the keys must be the API's whole enum, so a
// type the API gains fails `tsc -p console` until it is offered here.
const COLUMN_TYPES = Object.keys({ TEXT: 0, COUNT: 0, REGEX: 0, REGEX_EXTRACTION: 0, CONTAINS: 0, JSON_PATH: 0, XML_PATH: 0, PARSE_VALUE: 0, VARIABLE: 0, COALESCE: 0, COMBINE_COLUMNS: 0, APPLY_DIFF: 0, MATH_OPERATOR: 0, MIN_MAX: 0, ABSOLUTE_NUMERIC_DISTANCE: 0, COSINE_SIMILARITY: 0, COMPARE: 0, ASSERT_VALID: 0, LLM_ASSERTION: 0, PROMPT_TEMPLATE: 0, AI_DATA_EXTRACTION: 0, ENDPOINT: 0 } satisfies Record<CreateColumnRequest["type"], 0>);

/** Adds a column (POST …/columns): a title, a type and its configuration as JSON. */
function AddColumn({ ids, columns, onAdded }: { ids: SheetIds; columns: Column[]; onAdded: () => void }) {
  const [title, setTitle] = useState("");
  const [type, setType] = useState("COUNT");
  const [config, setConfig] = useState(() => JSON.stringify({ source: columns[0]?.title ?? "", type: "words" }));
  const [failure, setFailure] = useState<Error | null>(null);
  const [local, setLocal] = useState<string | null>(null);
  return (
    <form
      class="form-line"
      data-testid="add-column"
      onSubmit={(e) => {
        e.preventDefault();
        let parsed: unknown;
        try {
          parsed = config.trim() ? JSON.parse(config) : null;
        } catch (err) {
          setLocal(`is not JSON: ${(err as Error).message}`);
          return;
        }
        setLocal(null);
        // The type and configuration go as typed: the API's rules judge them, next to their fields.
        const body = { title, type: type as CreateColumnRequest["type"], config: parsed as CreateColumnRequest["config"] };
        post("/api/public/v2/tables/{table_id}/sheets/{sheet_id}/columns", ids, body).then(
          () => {
            setFailure(null);
            setTitle("");
            onAdded();
          },
          (err: Error) => setFailure(err),
        );
      }}
    >
      <label>
        New column
        <input aria-label="Column title" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} placeholder="title" />
        <FieldError failure={failure} at="title" />
      </label>
      <label>
        Type
        <input aria-label="Column type" list="column-types" value={type} onInput={(e) => setType((e.target as HTMLInputElement).value)} />
        <datalist id="column-types">
          {COLUMN_TYPES.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <FieldError failure={failure} at="type" />
      </label>
      <label>
        Configuration (JSON)
        <input aria-label="Column configuration" size={50} value={config} onInput={(e) => setConfig((e.target as HTMLInputElement).value)} />
        <FieldError failure={failure} at="config" local={local} />
      </label>
      <button type="submit">Add column</button>
      <WriteError failure={failure} shown={["title", "type", "config"]} />
    </form>
  );
}
