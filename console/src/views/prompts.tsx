// Prompts: the templates, one template's versions, a side-by-side diff of two versions, and its
// release labels (add, move, delete).
import { useState } from "preact/hooks";
import { del, get, patch, post } from "../api";
import { diffLines, versionLines } from "../diff";
import { href } from "../router";
import type { GetPromptTemplateResponse, ListPromptTemplates } from "../api.gen";
import { draftOf, type Draft } from "../draft";
import { ErrorBox, fmt, ListTable, Loading, PageError, Pager, SearchLine, Section, Tag, onText, useAsync } from "../ui";
import { Editor, Playground } from "./prompt-editor";

/** The folders of the workspace (every level), for the prompt list's folder choice. */
function FolderPick({ value, onPick }: { value: number | null; onPick: (id: number | null) => void }) {
  const folders = useAsync(() => get("/api/public/v2/folders/entities", { filter_type: "FOLDER", flatten: true }), []);
  return (
    <select aria-label="Folder" value={value === null ? "" : String(value)} onChange={onText((v) => onPick(v ? Number(v) : null))}>
      <option value="">all folders</option>
      {(folders.data?.entities ?? []).map((f) => (
        <option key={String(f.id)} value={String(f.id)}>
          {[...f.path, f.name].join(" / ")}
        </option>
      ))}
    </select>
  );
}

/** The templates directly in one folder (GET /api/public/v2/folders/entities), matching the search. */
function FolderPrompts({ folderId, name }: { folderId: number; name: string }) {
  const list = useAsync(() => get("/api/public/v2/folders/entities", { folder_id: folderId, filter_type: "PROMPT", search_query: name }), [folderId, name]);
  return (
    <ListTable
      list={list}
      items={(d) => d.entities}
      columns={[{ title: "name" }, { title: "folder" }, { title: "updated" }]}
      empty="No template in this folder."
      emptyAction={<a class="button" href={href("prompts", "new")}>+ New template</a>}
      row={(p) => (
        <tr key={String(p.id)}>
          <td>
            <a href={href("prompts", String(p.id))}>{p.name}</a>
          </td>
          <td>{p.path.join(" / ")}</td>
          <td>{fmt.time(p.updated_at)}</td>
        </tr>
      )}
    />
  );
}

export function PromptsView() {
  const [query, setQuery] = useState({ name: "", page: 1 });
  const [folder, setFolder] = useState<number | null>(null);
  const list = useAsync(() => (folder === null ? get("/prompt-templates", { name: query.name, page: query.page, per_page: 25, sort_by: "updated_at" }) : Promise.resolve(null)), [query.name, query.page, folder]);
  return (
    <Section title="Prompt templates" actions={<a href={href("prompts", "new")}>+ New template</a>}>
      <div class="search-line">
        <FolderPick value={folder} onPick={setFolder} />
        <SearchLine label="Name" placeholder="Name contains" onSearch={(name) => setQuery({ name, page: 1 })} />
      </div>
      {folder !== null ? (
        <FolderPrompts folderId={folder} name={query.name} />
      ) : (
        <ListTable
          list={list}
          items={(d: ListPromptTemplates | null) => d?.items ?? []}
          columns={[{ title: "name" }, { title: "latest version", num: true }, { title: "last change" }, { title: "tags" }, { title: "updated" }]}
          empty={query.name ? "No template has that name." : "No prompt template yet: create the first one."}
          emptyAction={<a class="button primary" href={href("prompts", "new")}>+ New template</a>}
          row={(p) => (
            <tr key={p.id}>
              <td>
                <a href={href("prompts", p.id)}>{p.prompt_name}</a>
              </td>
              <td class="num">v{p.version}</td>
              <td>{p.commit_message ?? ""}</td>
              <td>
                {p.tags.map((t) => (
                  <Tag key={t}>{t}</Tag>
                ))}
              </td>
              <td>{fmt.time(p.updated_at)}</td>
            </tr>
          )}
          footer={(d: ListPromptTemplates | null) => (d ? <Pager page={d.page} pages={d.pages} total={d.total} onPage={(page) => setQuery({ ...query, page })} /> : null)}
        />
      )}
    </Section>
  );
}

const versionCache = new Map<string, Promise<GetPromptTemplateResponse>>();
function fetchVersion(id: string, version: number) {
  const k = `${id}@${version}`;
  let hit = versionCache.get(k);
  if (!hit) {
    hit = get("/prompt-templates/{identifier}", { identifier: id }, { version });
    hit.catch(() => versionCache.delete(k));
    versionCache.set(k, hit);
  }
  return hit;
}

function Diff({ id, left, right }: { id: string; left: number; right: number }) {
  const pair = useAsync(() => Promise.all([fetchVersion(id, left), fetchVersion(id, right)]), [id, left, right]);
  if (pair.error) return <ErrorBox error={pair.error} />;
  if (!pair.data) return <Loading />;
  const rows = diffLines(versionLines(pair.data[0]), versionLines(pair.data[1]));
  const changes = rows.filter((r) => r.kind !== "same").length;
  return (
    <div>
      <p class="muted">
        v{left} ({pair.data[0].commit_message ?? "no message"}) → v{right} ({pair.data[1].commit_message ?? "no message"}): {changes} line
        {changes === 1 ? "" : "s"} differ
      </p>
      <table class="diff" data-testid="prompt-diff">
        <colgroup>
          <col class="ln" />
          <col />
          <col class="ln" />
          <col />
        </colgroup>
        <thead>
          <tr>
            <th colSpan={2}>v{left}</th>
            <th colSpan={2}>v{right}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i} class={`diff-${r.kind}`}>
              <td class="ln">{r.left?.n ?? ""}</td>
              <td class={`side ${r.left && r.kind !== "same" ? "del" : ""}`}>{r.left?.text ?? ""}</td>
              <td class="ln">{r.right?.n ?? ""}</td>
              <td class={`side ${r.right && r.kind !== "same" ? "add" : ""}`}>{r.right?.text ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Labels({ id, promptId, latest, onChange }: { id: string; promptId: number; latest: number; onChange: () => void }) {
  const labels = useAsync(() => get("/prompt-templates/{identifier}/labels", { identifier: id }), [id]);
  const [name, setName] = useState("");
  const [version, setVersion] = useState(String(latest));
  const [error, setError] = useState<string | null>(null);
  const act = (p: Promise<unknown>) =>
    p.then(
      () => {
        setError(null);
        labels.reload();
        onChange();
      },
      (e: Error) => setError(e.message),
    );
  const versions = Array.from({ length: latest }, (_, i) => latest - i);
  return (
    <div data-testid="release-labels">
      <ErrorBox error={error ?? labels.error} />
      <table class="grid">
        <thead>
          <tr>
            <th>label</th>
            <th>version</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(labels.data?.release_labels ?? []).map((l) => (
            <tr key={l.release_label_id}>
              <td>
                <Tag>{l.release_label}</Tag>
              </td>
              <td>
                <select
                  aria-label={`Version of ${l.release_label}`}
                  value={String(l.prompt_version_number)}
                  onChange={(e) => act(patch("/prompt-labels/{prompt_label_id}", { prompt_label_id: l.release_label_id }, { prompt_version_number: Number((e.target as HTMLSelectElement).value) }))}
                >
                  {versions.map((v) => (
                    <option value={String(v)} key={v}>
                      v{v}
                    </option>
                  ))}
                </select>
              </td>
              <td>
                <button type="button" onClick={() => act(del("/prompt-labels/{prompt_label_id}", { prompt_label_id: l.release_label_id }))}>
                  Delete
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form
        class="search-line"
        onSubmit={(e) => {
          e.preventDefault();
          if (!name.trim()) return;
          act(post("/prompts/{prompt_id}/label", { prompt_id: promptId }, { name: name.trim(), prompt_version_number: Number(version) })).then(() => setName(""));
        }}
      >
        <input aria-label="New label" placeholder="new label, e.g. prod" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <select aria-label="On version" value={version} onChange={(e) => setVersion((e.target as HTMLSelectElement).value)}>
          {versions.map((v) => (
            <option value={String(v)} key={v}>
              v{v}
            </option>
          ))}
        </select>
        <button type="submit">Add label</button>
      </form>
    </div>
  );
}

/** A prompt page's tabs, as the URL names them (?tab=…). */
const TABS = [
  ["editor", "Editor"],
  ["playground", "Playground"],
  ["diff", "Diff"],
  ["labels", "Labels"],
] as const;
type TabName = (typeof TABS)[number][0];

export function PromptDetail({ id, version, tab, fromRequest }: { id: string; version: number | null; tab: string | null; fromRequest: string | null }) {
  const latest = useAsync(() => get("/prompt-templates/{identifier}", { identifier: id }), [id]);
  const labels = useAsync(() => get("/prompt-templates/{identifier}/labels", { identifier: id }), [id]);
  const [pair, setPair] = useState<{ left: number; right: number } | null>(null);
  if (latest.error) return <PageError error={latest.error} back={{ href: href("prompts"), label: "All templates" }} retry={latest.reload} />;
  if (!latest.data) return <Loading />;
  const t = latest.data;
  const n: number = t.version;
  const current: TabName = TABS.some(([k]) => k === tab) ? (tab as TabName) : "editor";
  const base = version && version <= n ? version : n;
  const shown = pair ?? { left: Math.max(1, base - 1), right: base };
  const versions = Array.from({ length: n }, (_, i) => n - i);
  const tabHref = (name: TabName, v = version) => `${href("prompts", t.id)}?${new URLSearchParams({ ...(v ? { v: String(v) } : {}), tab: name })}`;
  const labelList = labels.data?.release_labels ?? [];
  const pick = (side: "left" | "right") => (
    <select aria-label={side === "left" ? "Left version" : "Right version"} value={String(shown[side])} onChange={(e) => setPair({ ...shown, [side]: Number((e.target as HTMLSelectElement).value) })}>
      {versions.map((v) => (
        <option value={String(v)} key={v}>
          v{v}
        </option>
      ))}
    </select>
  );
  return (
    <div class="detail">
      <p>
        <a href={href("prompts")}>‹ All templates</a>
      </p>
      <Section title={t.prompt_name} actions={<span class="muted">{n} version{n === 1 ? "" : "s"}</span>}>
        <p>
          {t.tags.map((x) => (
            <Tag key={x}>{x}</Tag>
          ))}
          {t.release_labels.map((x) => (
            <Tag key={`label-${x}`}>label: {x}</Tag>
          ))}
        </p>
      </Section>
      <div class="prompt-layout">
        <aside class="rail card" data-testid="version-rail" aria-label="Versions">
          <h2>Versions</h2>
          <ol>
            {versions.slice(0, 30).map((v) => (
              <VersionItem key={v} id={id} v={v} selected={v === base} labels={labelList.filter((l) => l.prompt_version_number === v).map((l) => l.release_label)} href={tabHref(current, v)} />
            ))}
          </ol>
          {n > 30 ? <p class="muted">The newest 30 of {n}.</p> : null}
        </aside>
        <div class="prompt-main">
          <nav class="tabs" role="tablist" aria-label="Prompt views">
            {TABS.map(([name, label]) => (
              <a key={name} role="tab" aria-selected={current === name} href={tabHref(name)} class={current === name ? "active" : ""}>
                {label}
              </a>
            ))}
          </nav>
          <EditAndRun
            key={`${t.id}@${base}`}
            tab={current}
            template={t}
            base={base}
            versions={versions}
            labels={labelList}
            fromRequest={fromRequest}
            onPublished={(published) => {
              setPair(null);
              latest.reload();
              labels.reload();
              // The page shows the new version once it is published.
              location.hash = `${href("prompts", t.id)}?v=${published}&tab=editor`;
            }}
          />
          {current === "diff" ? (
            <Section title="Compare versions">
              <div class="search-line">
                Compare {pick("left")} with {pick("right")}
              </div>
              <Diff id={id} left={shown.left} right={shown.right} />
            </Section>
          ) : null}
          {current === "labels" ? (
            <Section title="Release labels">
              <Labels id={id} promptId={t.id} latest={n} onChange={() => {
                latest.reload();
                labels.reload();
              }} />
            </Section>
          ) : null}
        </div>
      </div>
    </div>
  );
}

/** The editor and the playground on one draft of version `base`: both stay mounted, so switching tabs keeps the draft and the runs. */
function EditAndRun(props: {
  tab: TabName;
  template: GetPromptTemplateResponse;
  base: number;
  versions: number[];
  labels: { release_label: string; release_label_id: number; prompt_version_number: number }[];
  fromRequest: string | null;
  onPublished: (version: number) => void;
}) {
  const { template, base } = props;
  const version = useAsync(() => fetchVersion(String(template.id), base), [template.id, base]);
  const [draft, setDraft] = useState<Draft | null>(null);
  if (props.tab !== "editor" && props.tab !== "playground") return null;
  if (version.error) return <PageError error={version.error} back={{ href: href("prompts", template.id), label: "The latest version" }} retry={version.reload} />;
  if (!version.data) return <Loading />;
  const current = draft ?? draftOf(version.data.prompt_template, version.data.metadata);
  const ref = { id: template.id, name: template.prompt_name, version: base };
  return (
    <>
      <div hidden={props.tab !== "editor"}>
        <Section title={`Edit (a draft of v${base})`} actions={draft ? <button type="button" onClick={() => setDraft(null)}>Discard the draft</button> : null}>
          <Editor
            draft={current}
            setDraft={setDraft}
            template={ref}
            labels={props.labels}
            onPublished={(p) => {
              setDraft(null);
              props.onPublished(p.version_number);
            }}
          />
        </Section>
      </div>
      <div hidden={props.tab !== "playground"}>
        <Section title={`Playground (v${base} and the draft)`}>
          <Playground template={ref} versions={props.versions} draft={current} latest={template} fromRequest={props.fromRequest} />
        </Section>
      </div>
    </>
  );
}

/** One version in the rail: its number, labels, date and commit message (each version read once and kept for the diff). */
function VersionItem({ id, v, selected, labels, href: link }: { id: string; v: number; selected: boolean; labels: string[]; href: string }) {
  const one = useAsync(() => fetchVersion(id, v), [id, v]);
  return (
    <li class={selected ? "selected" : ""} data-version={v}>
      <a href={link} aria-current={selected ? "page" : undefined}>
        <span class="rail-head">
          <b>v{v}</b>
          {labels.map((l) => (
            <Tag key={l}>{l}</Tag>
          ))}
        </span>
        <span class="muted rail-date">{one.data ? fmt.time(one.data.created_at) : ""}</span>
        <span class="rail-message">{one.data?.commit_message ?? (one.data ? "no commit message" : "")}</span>
      </a>
    </li>
  );
}
