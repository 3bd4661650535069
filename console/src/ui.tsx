// Small pieces every view uses. Text is always rendered as text (Preact escapes it); no view sets HTML.
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { pricedAs } from "../../src/converters/pricing";
import { ApiFailure } from "./api";

export interface Async<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` when `deps` change (and on reload); a stale answer never overwrites a newer one. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({ data: null, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === seq.current && setState({ data, error: null, loading: false }),
      (err: unknown) => mine === seq.current && setState({ data: null, error: err instanceof Error ? err.message : String(err), loading: false }),
    );
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/** Calls `fn` every `ms` while `active`. */
export function useInterval(fn: () => void, ms: number, active: boolean) {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return;
    const id = setInterval(() => saved.current(), ms);
    return () => clearInterval(id);
  }, [ms, active]);
}

export function Loading({ what = "Loading" }: { what?: string }) {
  return <p class="muted">{what}…</p>;
}

export function ErrorBox({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

/** A page that could not load: the API's message, and the ways back (the list it came from, or trying again). */
export function PageError({ error, back, retry }: { error: string; back: { href: string; label: string }; retry?: () => void }) {
  return (
    <div class="page-error" role="alert" data-testid="page-error">
      <p class="error">{error}</p>
      <p class="actions">
        <a class="button" href={back.href}>
          ‹ {back.label}
        </a>
        {retry ? (
          <button type="button" onClick={retry}>
            Try again
          </button>
        ) : null}
      </p>
    </div>
  );
}

/** What an empty list says: one sentence, and the action that fills it. */
export function EmptyState({ text, action }: { text: string; action?: ComponentChildren }) {
  return (
    <div class="empty" data-testid="empty-state">
      <p>{text}</p>
      {action ?? null}
    </div>
  );
}

/** A column of a ListTable: its heading, right-aligned when numeric. */
export interface Column {
  title: string;
  num?: boolean;
}

/**
 * A list view's body: the error of its last load, then a table of `items` (one `row` each, `empty`
 * when there is none) followed by `footer` (its pager), or Loading while the first answer is awaited.
 */
export function ListTable<D, T>(props: {
  list: Async<D>;
  items: (data: D) => T[];
  columns: Column[];
  row: (item: T) => ComponentChildren;
  empty: string;
  emptyAction?: ComponentChildren;
  footer?: (data: D) => ComponentChildren;
}) {
  const { list } = props;
  if (!list.data)
    return list.error ? (
      <div class="page-error" role="alert">
        <p class="error">{list.error}</p>
        <button type="button" onClick={list.reload}>
          Try again
        </button>
      </div>
    ) : list.loading ? (
      <Loading />
    ) : null;
  const items = props.items(list.data);
  if (items.length === 0 && !props.footer) return <EmptyState text={props.empty} action={props.emptyAction} />;
  return (
    <>
      <ErrorBox error={list.error} />
      <div class="scroll-x">
      <table class="grid">
        <thead>
          <tr>
            {props.columns.map((c) => (
              <th key={c.title} class={c.num ? "num" : undefined}>
                {c.title}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{items.map(props.row)}</tbody>
      </table>
      </div>
      {items.length === 0 ? <EmptyState text={props.empty} action={props.emptyAction} /> : null}
      {props.footer?.(list.data)}
    </>
  );
}

/** The list views' search line: a box and a Find button; `onSearch` gets the text when submitted. */
export function SearchLine({ label, placeholder, onSearch }: { label: string; placeholder: string; onSearch: (text: string) => void }) {
  const [text, setText] = useState("");
  return (
    <form
      class="search-line"
      onSubmit={(e) => {
        e.preventDefault();
        onSearch(text);
      }}
    >
      <input type="search" aria-label={label} placeholder={placeholder} value={text} onInput={(e) => setText((e.target as HTMLInputElement).value)} />
      <button type="submit" class="primary">
        Find
      </button>
    </form>
  );
}

export function Status({ value }: { value: string | null | undefined }) {
  if (!value) return null;
  return <span class={`badge status-${value.toLowerCase()}`}>{value}</span>;
}

export function Tag({ children }: { children: ComponentChildren }) {
  return <span class="tag">{children}</span>;
}

export function Json({ value }: { value: unknown }) {
  return <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
}

export function Pager(props: { page: number; pages: number; total?: number; onPage: (p: number) => void; estimate?: boolean }) {
  const { page, pages, total, onPage } = props;
  return (
    <div class="pager">
      <button type="button" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        ‹ Prev
      </button>
      <span>
        page {page} of {Math.max(pages, 1)}
        {total !== undefined ? ` · ${total}${props.estimate ? "+" : ""} in all` : ""}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        Next ›
      </button>
    </div>
  );
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card">
      <header class="card-head">
        <h2>{title}</h2>
        {actions}
      </header>
      {children}
    </section>
  );
}

export const fmt = {
  time(iso: string | null | undefined): string {
    if (!iso) return "";
    const d = new Date(iso);
    return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
  },
  /** A time in a list: the hour today, the day and hour this year, else the date. */
  shortTime(iso: string | null | undefined): string {
    if (!iso) return "";
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return iso;
    const now = new Date();
    if (d.toDateString() === now.toDateString()) return d.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    return d.toLocaleString(undefined, d.getFullYear() === now.getFullYear() ? { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" } : { year: "numeric", month: "short", day: "numeric" });
  },
  /**
   * A cost in 2 to 4 significant digits ($0.0042, $0.12, $3.40, $1,234); "—" for a log the price table
   * does not price (its stored 0 is "unknown", not free) when its model is given.
   */
  cost(v: number | null | undefined, model?: string | null): string {
    if (v === null || v === undefined) return "";
    if (v === 0 && model && !pricedAs(model)) return "—";
    if (v === 0) return "$0";
    if (v >= 1000) return `$${Math.round(v).toLocaleString("en-US")}`;
    return `$${v.toLocaleString("en-US", { minimumSignificantDigits: 2, maximumSignificantDigits: v >= 100 ? 4 : 3 })}`;
  },
  ms(v: number | null | undefined): string {
    if (v === null || v === undefined) return "";
    return v < 1000 ? `${Math.round(v)} ms` : `${(v / 1000).toFixed(2)} s`;
  },
  num(v: number | null | undefined): string {
    return v === null || v === undefined ? "" : v.toLocaleString();
  },
  /** A cell's or value's text: strings as they are, anything else as JSON. */
  value(v: unknown): string {
    if (v === null || v === undefined) return "";
    return typeof v === "string" ? v : JSON.stringify(v);
  },
};

/**
 * The API's rules broken at `at` (a validation error's fields inside it), shown next to that field.
 * `failure` is any failed write: only an ApiFailure names fields.
 */
export function FieldError({ failure, at, local }: { failure: Error | null; at: string; local?: string | null }) {
  const rules = [...(local ? [local] : []), ...(failure instanceof ApiFailure ? failure.at(at) : [])];
  return rules.length ? (
    <span class="field-error" role="alert" data-field={at}>
      {rules.join("; ")}
    </span>
  ) : null;
}

/** The message of a failed write, unless every rule it broke is already shown next to its field. */
export function WriteError({ failure, shown }: { failure: Error | null; shown?: string[] }) {
  if (!failure) return null;
  if (failure instanceof ApiFailure && failure.rules.length && shown && failure.rules.every((d) => shown.some((s) => failure.at(s).includes(d.rule)))) return null;
  return <ErrorBox error={failure.message} />;
}

/** An input's handler that hands its new value to `set`. */
export const onText = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement).value);
