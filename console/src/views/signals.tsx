// Signals: define a yes/no statement an LLM judges about production logs, test it on chosen logs with
// the verdicts side by side, enable it, and watch its true-rate per day; hooks and backfills too.
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import "../signals.css";
import { del, get, patch, post, type AnswerOf, type BodyOf } from "../api";
import { go, href } from "../router";
import { ErrorBox, FieldError, fmt, ListTable, Loading, Pager, Section, Status, useAsync, useInterval, onText, WriteError } from "../ui";

type Signal = AnswerOf<"GET /api/public/v2/signals/{signal_id}">["signal"];
type Hook = Signal["hooks"][number];
type HookBody = BodyOf<"POST /api/public/v2/signals/{signal_id}/hooks">;
type Verdict = AnswerOf<"POST /api/public/v2/signals/test">["results"][number];

const pct = (v: number | null | undefined) => (v === null || v === undefined ? "—" : `${(v * 100).toFixed(1)} %`);

export function Chip({ color, name }: { color: string | null; name: string }) {
  return (
    <span class="signal-chip">
      <svg width="10" height="10" aria-hidden="true">
        <circle cx="5" cy="5" r="5" fill={color ?? "#7a7f8c"} />
      </svg>
      {name}
    </span>
  );
}

/** A verdict as a badge: true, false, or the error. */
export function VerdictBadge({ result, status }: { result: boolean | null; status: string }) {
  if (status !== "ok") return <span class="badge status-error">error</span>;
  return <span class={`badge verdict-${result ? "true" : "false"}`}>{result ? "true" : "false"}</span>;
}

type LogVerdict = AnswerOf<"GET /api/public/v2/requests/{request_id}">["signals"][number];

/** A log's verdicts (the request view): each signal's chip, its verdict, and its reasoning and quote on hover and below. */
export function SignalVerdicts({ verdicts }: { verdicts: LogVerdict[] }) {
  if (verdicts.length === 0) return <span class="muted">none</span>;
  return (
    <ul class="signal-verdicts" data-testid="signal-verdicts">
      {verdicts.map((v) => (
        <li key={v.signal_id} title={v.status === "ok" ? (v.reasoning ?? "") : (v.error ?? "")}>
          <a href={href("signals", v.signal_id)}>{v.name}</a> <VerdictBadge result={v.result} status={v.status} />
          {v.quote ? (
            <>
              {" "}
              <q class={v.quote_verified ? "quote verified" : "quote"}>{v.quote}</q>
            </>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

/** A hook's scope in words. */
function scopeText(h: Hook): string {
  const parts: string[] = [];
  if (h.scope === "all") parts.push("every log");
  if (h.scope === "release_label") parts.push(`release label "${h.release_label}"`);
  if (h.scope === "prompt_template") {
    parts.push(`template #${h.prompt_template_id}`);
    if (h.prompt_version_number) parts.push(`version ${h.prompt_version_number}`);
    if (h.release_label) parts.push(`label "${h.release_label}"`);
  }
  if (h.ab_variant) parts.push(`A/B variant "${h.ab_variant}"`);
  if (h.filters) parts.push("filtered");
  return parts.join(", ");
}

function HookForm({ onAdd, failure }: { onAdd: (h: HookBody) => void; failure: Error | null }) {
  const [scope, setScope] = useState<HookBody["scope"]>("all");
  const [template, setTemplate] = useState("");
  const [label, setLabel] = useState("");
  const [rate, setRate] = useState("0.5");
  return (
    <div class="hook-form">
      <label>
        Scope{" "}
        <select aria-label="Scope" value={scope} onChange={onText((v) => setScope(v as HookBody["scope"]))}>
          <option value="all">every log</option>
          <option value="prompt_template">a prompt template</option>
          <option value="release_label">a release label</option>
        </select>
      </label>
      {scope === "prompt_template" ? (
        <label>
          Template id <input aria-label="Template id" inputMode="numeric" size={6} value={template} onInput={onText(setTemplate)} />
          <FieldError failure={failure} at="prompt_template_id" />
        </label>
      ) : null}
      {scope === "release_label" ? (
        <label>
          Label <input aria-label="Release label" size={10} value={label} onInput={onText(setLabel)} />
          <FieldError failure={failure} at="release_label" />
        </label>
      ) : null}
      <label>
        Sample rate <input aria-label="Sample rate" size={4} value={rate} onInput={onText(setRate)} />
        <FieldError failure={failure} at="sample_rate" />
      </label>
      <button
        type="button"
        onClick={() =>
          onAdd({
            scope,
            sample_rate: Number(rate),
            ...(scope === "prompt_template" ? { prompt_template_id: Number(template) } : {}),
            ...(scope === "release_label" ? { release_label: label } : {}),
          })
        }
      >
        Add hook
      </button>
    </div>
  );
}

function NewSignal({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState("");
  const [statement, setStatement] = useState("");
  const [color, setColor] = useState("#22c55e");
  const [rate, setRate] = useState("0.5");
  const [failure, setFailure] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <form
      class="signal-form"
      onSubmit={(e) => {
        e.preventDefault();
        setBusy(true);
        post("/api/public/v2/signals", { name, statement, color, enabled: false, hooks: [{ scope: "all", sample_rate: Number(rate) }] }).then(
          (r) => go("signals", r.signal.id),
          (err: Error) => {
            setFailure(err);
            setBusy(false);
          },
        );
      }}
    >
      <label>
        Name <input aria-label="Signal name" value={name} onInput={onText(setName)} />
        <FieldError failure={failure} at="name" />
      </label>
      <label class="wide">
        Statement
        <textarea aria-label="Statement" rows={3} placeholder="Did the assistant reply in the language the user wrote in?" value={statement} onInput={onText(setStatement)} />
        <FieldError failure={failure} at="statement" />
      </label>
      <label>
        Color <input type="color" aria-label="Color" value={color} onInput={onText(setColor)} />
      </label>
      <label>
        Sample rate (every log) <input aria-label="Sample rate" size={4} value={rate} onInput={onText(setRate)} />
        <FieldError failure={failure} at="hooks[0].sample_rate" />
      </label>
      <p class="muted">A new signal starts disabled: test it on a few logs, then enable it.</p>
      <div class="filter-actions">
        <button type="submit" class="primary" disabled={busy}>
          Create signal
        </button>
        <button type="button" onClick={onDone}>
          Cancel
        </button>
      </div>
      <WriteError failure={failure} shown={["name", "statement", "hooks[0].sample_rate"]} />
    </form>
  );
}

export function SignalsView() {
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const list = useAsync(() => get("/api/public/v2/signals", { page, per_page: 25 }), [page]);
  return (
    <Section
      title="Signals"
      actions={
        <button type="button" class="primary" onClick={() => setCreating(true)}>
          + New signal
        </button>
      }
    >
      {creating ? <NewSignal onDone={() => setCreating(false)} /> : null}
      <ListTable
        list={list}
        items={(d) => d.items}
        columns={[{ title: "signal" }, { title: "statement" }, { title: "enabled" }, { title: "judged", num: true }, { title: "true", num: true }, { title: "cost", num: true }]}
        empty="No signal yet: create one, test it on a few logs, then enable it."
        row={(s) => (
          <tr key={s.id} data-testid="signal-row">
            <td>
              <a href={href("signals", s.id)}>
                <Chip color={s.color} name={s.name} />
              </a>
            </td>
            <td>{s.statement}</td>
            <td>{s.enabled ? <span class="badge status-ok">on</span> : <span class="badge">off</span>}</td>
            <td class="num">{fmt.num(s.totals.processed)}</td>
            <td class="num">{pct(s.totals.true_rate)}</td>
            <td class="num">{fmt.cost(s.totals.cost_usd)}</td>
          </tr>
        )}
        footer={(d) => <Pager page={d.page} pages={d.pages} total={d.total} onPage={setPage} />}
      />
    </Section>
  );
}

function TrueRateChart({ signalId }: { signalId: string }) {
  const series = useAsync(() => get("/api/public/v2/signals/{signal_id}/series", { signal_id: signalId }), [signalId]);
  const box = useRef<HTMLDivElement>(null);
  const days = series.data?.days ?? [];
  useEffect(() => {
    if (!box.current || days.length === 0) return;
    const x = days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
    const plot = new uPlot(
      {
        title: "True-rate per day",
        width: Math.max(320, box.current.clientWidth - 8),
        height: 200,
        series: [{}, { label: "true-rate", stroke: "#1f5fbf", width: 2, points: { show: true, size: 6 }, value: (_u, v) => pct(v) }],
        scales: { x: { time: true }, y: { range: [0, 1] } },
        axes: [{}, { size: 60, values: (_u, ticks) => ticks.map((t) => `${Math.round(t * 100)} %`) }],
      },
      [x, days.map((d) => d.true_rate)] as uPlot.AlignedData,
      box.current,
    );
    return () => plot.destroy();
  }, [JSON.stringify(days)]);
  if (series.error) return <ErrorBox error={series.error} />;
  if (!series.data) return <Loading />;
  return days.length === 0 ? <p class="muted">No verdict in the last 30 days yet.</p> : <div class="chart" ref={box} data-testid="true-rate-chart" />;
}

/** Recent logs to pick from, and the verdicts of the picked ones side by side. */
function TestPanel({ signal }: { signal: Signal }) {
  const logs = useAsync(() => post("/api/public/v2/requests/search", { per_page: 20 }), []);
  const [picked, setPicked] = useState<number[]>([]);
  const [verdicts, setVerdicts] = useState<Verdict[] | null>(null);
  const [failure, setFailure] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const byId = new Map(verdicts?.map((v) => [v.request_id, v]) ?? []);
  const toggle = (id: number) => setPicked((p) => (p.includes(id) ? p.filter((x) => x !== id) : p.length < 20 ? [...p, id] : p));
  return (
    <Section
      title="Test on chosen logs"
      actions={
        <button
          type="button"
          class="primary"
          disabled={busy || picked.length === 0}
          onClick={() => {
            setBusy(true);
            setFailure(null);
            post("/api/public/v2/signals/{signal_id}/test", { signal_id: signal.id }, { request_ids: picked }).then(
              (r) => {
                setVerdicts(r.results);
                setBusy(false);
              },
              (err: Error) => {
                setFailure(err);
                setBusy(false);
              },
            );
          }}
        >
          {busy ? "Judging…" : `Test ${picked.length} log${picked.length === 1 ? "" : "s"}`}
        </button>
      }
    >
      <p class="muted">Pick up to 20 logs: each is judged with the signal as saved, side by side. Nothing is stored.</p>
      <ErrorBox error={logs.error ?? failure?.message ?? null} />
      {!logs.data ? (
        <Loading />
      ) : (
        <table class="grid" data-testid="signal-test">
          <thead>
            <tr>
              <th />
              <th>log</th>
              <th>model</th>
              <th>time</th>
              <th>verdict</th>
              <th>reasoning</th>
              <th>quote</th>
            </tr>
          </thead>
          <tbody>
            {logs.data.items.map((l) => {
              const v = byId.get(l.id);
              return (
                <tr key={l.id}>
                  <td>
                    <input type="checkbox" aria-label={`Pick log ${l.id}`} checked={picked.includes(l.id)} onChange={() => toggle(l.id)} />
                  </td>
                  <td>
                    <a href={href("requests", l.id)}>#{l.id}</a>
                  </td>
                  <td>{l.engine}</td>
                  <td>{fmt.time(l.request_start_time)}</td>
                  <td>{v ? <VerdictBadge result={v.result} status={v.status} /> : null}</td>
                  <td>{v ? (v.status === "ok" ? v.reasoning : v.error) : null}</td>
                  <td>{v?.quote ? <q class={v.quote_verified ? "quote verified" : "quote"} title={v.quote_verified ? "found in the log" : "not found in the log"}>{v.quote}</q> : null}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </Section>
  );
}

function Backfills({ signalId }: { signalId: string }) {
  const list = useAsync(() => get("/api/public/v2/signals/{signal_id}/backfills", { signal_id: signalId }), [signalId]);
  const [days, setDays] = useState("7");
  const [rate, setRate] = useState("1");
  const [max, setMax] = useState("1000");
  const [failure, setFailure] = useState<Error | null>(null);
  const open = list.data?.backfills.some((b) => b.status === "queued" || b.status === "running") ?? false;
  useInterval(list.reload, 2000, open);
  return (
    <Section title="Backfills">
      <div class="hook-form">
        <label>
          Last <input aria-label="Days" size={3} value={days} onInput={onText(setDays)} /> days
        </label>
        <label>
          Sample rate <input aria-label="Backfill sample rate" size={4} value={rate} onInput={onText(setRate)} />
        </label>
        <label>
          At most <input aria-label="Max logs" size={6} value={max} onInput={onText(setMax)} /> logs
        </label>
        <button
          type="button"
          onClick={() => {
            const now = Date.now();
            setFailure(null);
            post("/api/public/v2/signals/{signal_id}/backfills", { signal_id: signalId }, { from: now - Number(days) * 86_400_000, to: now, sample_rate: Number(rate), max_logs: Number(max) }).then(list.reload, setFailure);
          }}
        >
          Judge past logs
        </button>
      </div>
      <WriteError failure={failure} />
      <ListTable
        list={list}
        items={(d) => d.backfills}
        columns={[{ title: "started" }, { title: "status" }, { title: "matched", num: true }, { title: "queued", num: true }, { title: "judged", num: true }, { title: "skipped", num: true }, { title: "cost", num: true }, { title: "" }]}
        empty="No backfill yet."
        row={(b) => (
          <tr key={b.id}>
            <td>{fmt.time(b.created_at)}</td>
            <td>
              <Status value={b.status} />
            </td>
            <td class="num">{fmt.num(b.matched)}</td>
            <td class="num">{fmt.num(b.enqueued)}</td>
            <td class="num">{fmt.num(b.judged)}</td>
            <td class="num">{fmt.num(b.skipped)}</td>
            <td class="num">{fmt.cost(b.cost_usd)}</td>
            <td>
              {b.status === "queued" || b.status === "running" ? (
                <button type="button" onClick={() => del("/api/public/v2/signals/{signal_id}/backfills/{backfill_id}", { signal_id: signalId, backfill_id: b.id }).then(list.reload, setFailure)}>
                  Cancel
                </button>
              ) : null}
            </td>
          </tr>
        )}
      />
    </Section>
  );
}

export function SignalDetail({ id }: { id: string }) {
  const signal = useAsync(() => get("/api/public/v2/signals/{signal_id}", { signal_id: id }), [id]);
  const [statement, setStatement] = useState<string | null>(null);
  const [failure, setFailure] = useState<Error | null>(null);
  const s = signal.data?.signal;
  const change = (body: BodyOf<"PATCH /api/public/v2/signals/{signal_id}">) => {
    setFailure(null);
    return patch("/api/public/v2/signals/{signal_id}", { signal_id: id }, body).then(() => {
      setStatement(null);
      signal.reload();
    }, setFailure);
  };
  if (!s) return signal.error ? <ErrorBox error={signal.error} /> : <Loading />;
  return (
    <div class="detail">
      <p>
        <a href={href("signals")}>‹ All signals</a>
      </p>
      <Section
        title={s.name}
        actions={
          <label class="toggle">
            <input type="checkbox" aria-label="Enabled" checked={s.enabled} onChange={(e) => change({ enabled: (e.target as HTMLInputElement).checked })} /> Enabled
          </label>
        }
      >
        <WriteError failure={failure} shown={["statement"]} />
        <label class="wide">
          Statement (revision {s.revision})
          <textarea aria-label="Statement" rows={3} value={statement ?? s.statement} onInput={onText(setStatement)} />
          <FieldError failure={failure} at="statement" />
        </label>
        {statement !== null && statement !== s.statement ? (
          <button type="button" class="primary" onClick={() => change({ statement })}>
            Save statement
          </button>
        ) : null}
        <div class="totals signal-totals">
          <div>
            <b data-testid="signal-processed">{fmt.num(s.totals.processed)}</b> judged
          </div>
          <div>
            <b data-testid="signal-true-rate">{pct(s.totals.true_rate)}</b> true
          </div>
          <div>
            <b>{fmt.num(s.totals.errors)}</b> errors
          </div>
          <div>
            <b>{fmt.num(s.totals.skipped)}</b> skipped by the budget
          </div>
          <div>
            <b>{fmt.cost(s.totals.cost_usd)}</b> spent
          </div>
        </div>
        <TrueRateChart signalId={id} />
      </Section>
      <Section title="Hooks">
        <p class="muted">A log is judged when any hook whose scope and filters match it samples it.</p>
        <table class="grid">
          <tbody>
            {s.hooks.map((h) => (
              <tr key={h.id} data-testid="hook-row">
                <td>{scopeText(h)}</td>
                <td class="num">{pct(h.sample_rate)} sampled</td>
                <td>
                  <button type="button" onClick={() => del("/api/public/v2/signals/{signal_id}/hooks/{hook_id}", { signal_id: id, hook_id: h.id }).then(signal.reload, setFailure)}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {s.hooks.length === 0 ? <p class="muted">No hook: the signal judges nothing until one is added.</p> : null}
        <HookForm failure={failure} onAdd={(h) => post("/api/public/v2/signals/{signal_id}/hooks", { signal_id: id }, h).then(signal.reload, setFailure)} />
      </Section>
      <TestPanel signal={s} />
      <Backfills signalId={id} />
    </div>
  );
}
