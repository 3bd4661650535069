// The console: asks for an API key once per tab, then shows the views over the public API.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { forgetKey, saveKey, savedKey, tryKey, whenUnauthorized } from "./api";
import { href, useRoute } from "./router";
import { PageError } from "./ui";
import "./style.css";
import { AnalyticsView } from "./views/analytics";
import { DatasetDetail, DatasetsView, EvaluationDetail, EvaluationsView } from "./views/datasets";
import { PromptDetail, PromptsView } from "./views/prompts";
import { NewPrompt } from "./views/prompt-editor";
import { ReleaseDetail, ReleasesView } from "./views/releases";
import { RequestDetail, RequestsView } from "./views/requests";
import { SettingsView } from "./views/settings";
import { TableDetail, TablesView } from "./views/tables";
import { TraceDetail, TracesView } from "./views/traces";
import { PrivacyView } from "./views/privacy";
import { SignalDetail, SignalsView } from "./views/signals";

// The top bar's pages, in order: a new view adds one line here and one case in View below.
const VIEWS: [string, string][] = [
  ["requests", "Requests"],
  ["traces", "Traces"],
  ["prompts", "Prompts"],
  ["releases", "Releases"],
  ["tables", "Tables"],
  ["datasets", "Datasets"],
  ["evaluations", "Evaluations"],
  ["analytics", "Analytics"],
  ["signals", "Signals"],
  ["privacy", "Privacy"],
  ["settings", "Settings"],
];

function KeyForm({ onKey, reason }: { onKey: (key: string) => void; reason: string | null }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(reason);
  const [busy, setBusy] = useState(false);
  return (
    <main class="login">
      <h1>PromptEdge console</h1>
      <p>Enter an API key of your workspace. It is kept in this tab only and sent with each call; closing the tab forgets it.</p>
      <p class="muted" data-testid="key-help">
        Where a key comes from: running locally, <code>npm run dev</code> prints one (and keeps it in <code>.dev-api-key</code>); for a
        deployment, whoever runs it makes one with <code>npm run keys -- create --workspace &lt;name&gt; --remote</code>. Keys start with{" "}
        <code>pe_</code>.
      </p>
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

// Each detail view is keyed by its id: going from one table (request, trace…) to another mounts a
// fresh view, so the previous one's data and open forms never show under the new address.
function View() {
  const { parts, params } = useRoute();
  const [view, id, sub] = parts;
  switch (view ?? "requests") {
    case "requests":
      return id ? <RequestDetail key={id} id={id} /> : <RequestsView params={params} />;
    case "traces":
      return id ? <TraceDetail key={id} traceId={id} spanId={params.get("span")} /> : <TracesView />;
    case "prompts":
      if (id === "new") return <NewPrompt />;
      return id ? <PromptDetail key={id} id={id} version={params.get("v") ? Number(params.get("v")) || null : null} tab={params.get("tab")} fromRequest={params.get("from")} /> : <PromptsView />;
    case "releases":
      return id ? <ReleaseDetail key={id} id={id} /> : <ReleasesView />;
    case "tables":
      return id ? <TableDetail key={id} tableId={id} sheetId={sub ?? null} /> : <TablesView />;
    case "datasets":
      return id ? <DatasetDetail key={id} id={id} /> : <DatasetsView />;
    case "evaluations":
      return id ? <EvaluationDetail key={id} id={id} /> : <EvaluationsView />;
    case "analytics":
      return <AnalyticsView />;
    case "signals":
      return id ? <SignalDetail key={id} id={id} /> : <SignalsView />;
    case "privacy":
      return <PrivacyView />;
    case "settings":
      return <SettingsView />;
    default:
      return <PageError error="There is no such page." back={{ href: href("requests"), label: "Requests" }} />;
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
        <nav aria-label="Pages">
          {VIEWS.map(([name, label]) => (
            <a key={name} href={href(name)} class={current === name ? "active" : ""}>
              {label}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        <a href="/docs" class="secondary">
          API reference
        </a>
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
