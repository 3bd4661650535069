// The console: asks for an API key once per tab, then shows the views over the public API.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { forgetKey, saveKey, savedKey, tryKey, whenUnauthorized } from "./api";
import { href, useRoute } from "./router";
import "./style.css";
import { AnalyticsView } from "./views/analytics";
import { DatasetDetail, DatasetsView, EvaluationDetail, EvaluationsView } from "./views/datasets";
import { PromptDetail, PromptsView } from "./views/prompts";
import { NewPrompt } from "./views/prompt-editor";
import { RequestDetail, RequestsView } from "./views/requests";
import { TableDetail, TablesView } from "./views/tables";
import { TraceDetail, TracesView } from "./views/traces";
import { SignalDetail, SignalsView } from "./views/signals";

const VIEWS: [string, string][] = [
  ["requests", "Requests"],
  ["traces", "Traces"],
  ["prompts", "Prompts"],
  ["tables", "Tables"],
  ["datasets", "Datasets"],
  ["evaluations", "Evaluations"],
  ["analytics", "Analytics"],
  ["signals", "Signals"],
];

function KeyForm({ onKey, reason }: { onKey: (key: string) => void; reason: string | null }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(reason);
  const [busy, setBusy] = useState(false);
  return (
    <main class="login">
      <h1>PromptEdge console</h1>
      <p>Enter an API key of your workspace. It is kept in this tab only (sessionStorage) and sent as the X-API-KEY header.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const k = key.trim();
          if (!k) return;
          setBusy(true);
          tryKey(k).then(
            () => onKey(k),
            (err: Error) => {
              setBusy(false);
              setError(err.message);
            },
          );
        }}
      >
        <input type="password" name="api-key" aria-label="API key" autocomplete="off" placeholder="pe_…" value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Checking…" : "Open"}
        </button>
      </form>
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </main>
  );
}

function View() {
  const { parts, params } = useRoute();
  const [view, id, sub] = parts;
  switch (view ?? "requests") {
    case "requests":
      return id ? <RequestDetail id={id} /> : <RequestsView />;
    case "traces":
      return id ? <TraceDetail traceId={id} spanId={params.get("span")} /> : <TracesView />;
    case "prompts":
      if (id === "new") return <NewPrompt />;
      return id ? <PromptDetail key={id} id={id} version={params.get("v") ? Number(params.get("v")) || null : null} /> : <PromptsView />;
    case "tables":
      return id ? <TableDetail tableId={id} sheetId={sub ?? null} /> : <TablesView />;
    case "datasets":
      return id ? <DatasetDetail id={id} /> : <DatasetsView />;
    case "evaluations":
      return id ? <EvaluationDetail id={id} /> : <EvaluationsView />;
    case "analytics":
      return <AnalyticsView />;
    case "signals":
      return id ? <SignalDetail key={id} id={id} /> : <SignalsView />;
    default:
      return <p class="error">No such page.</p>;
  }
}

function App() {
  const [key, setKey] = useState<string | null>(savedKey());
  const [reason, setReason] = useState<string | null>(null);
  const { parts } = useRoute();
  useEffect(() => {
    whenUnauthorized(() => {
      forgetKey();
      setReason("The key was refused (revoked or mistyped): enter it again.");
      setKey(null);
    });
  }, []);
  if (!key)
    return (
      <KeyForm
        reason={reason}
        onKey={(k) => {
          saveKey(k);
          setReason(null);
          setKey(k);
        }}
      />
    );
  const current = parts[0] ?? "requests";
  return (
    <>
      <header class="top">
        <a class="brand" href={href("requests")}>
          PromptEdge
        </a>
        <nav>
          {VIEWS.map(([name, label]) => (
            <a key={name} href={href(name)} class={current === name ? "active" : ""}>
              {label}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        <a href="/docs">API reference</a>
        <button
          type="button"
          onClick={() => {
            forgetKey();
            setKey(null);
          }}
        >
          Forget key
        </button>
      </header>
      <main class="content">
        <View />
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
