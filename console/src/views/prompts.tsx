// Prompts: the templates, one template's versions, a side-by-side diff of two versions, and its
// release labels (add, move, delete).
import { useState } from "preact/hooks";
import { del, get, patch, post } from "../api";
import { diffLines, versionLines } from "../diff";
import { go, href } from "../router";
import type { GetPromptTemplateResponse, ListPromptTemplates } from "../api.gen";
import { draftOf, type Draft } from "../draft";
import { ErrorBox, fmt, ListTable, Loading, Pager, SearchLine, Section, Tag, onText, useAsync } from "../ui";
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
          empty="No template."
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

export function PromptDetail({ id, version }: { id: string; version: number | null }) {
  const latest = useAsync(() => get("/prompt-templates/{identifier}", { identifier: id }), [id]);
  const [pair, setPair] = useState<{ left: number; right: number } | null>(null);
  if (latest.error) return <ErrorBox error={latest.error} />;
  if (!latest.data) return <Loading />;
  const t = latest.data;
  const n: number = t.version;
  const shown = pair ?? { left: Math.max(1, (version ?? n) - 1), right: version ?? n };
  const versions = Array.from({ length: n }, (_, i) => n - i);
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
      <Section title={t.prompt_name} actions={<span class="muted">id {t.id} · {n} version{n === 1 ? "" : "s"}</span>}>
        <p>
          {t.tags.map((x) => (
            <Tag key={x}>{x}</Tag>
          ))}
          {t.release_labels.map((x) => (
            <Tag key={`label-${x}`}>label: {x}</Tag>
          ))}
        </p>
      </Section>
      <EditAndRun key={`${t.id}@${version ?? n}`} template={t} base={version ?? n} versions={versions} onPublished={() => {
        setPair(null);
        latest.reload();
        // A page opened at ?v=N shows the new latest version once it is published.
        go("prompts", t.id);
      }} />
      <Section title="Compare versions">
        <div class="search-line">
          Compare {pick("left")} with {pick("right")}
        </div>
        <Diff id={id} left={shown.left} right={shown.right} />
      </Section>
      <Section title="Release labels">
        <Labels id={id} promptId={t.id} latest={n} onChange={latest.reload} />
      </Section>
      <Section title="Versions">
        <VersionList id={id} latest={n} onPick={(v) => setPair({ left: Math.max(1, v - 1), right: v })} />
      </Section>
    </div>
  );
}

/** The editor on a draft of version `base`, and the playground over the versions and that draft. */
function EditAndRun({ template, base, versions, onPublished }: { template: GetPromptTemplateResponse; base: number; versions: number[]; onPublished: () => void }) {
  const version = useAsync(() => fetchVersion(String(template.id), base), [template.id, base]);
  const [draft, setDraft] = useState<Draft | null>(null);
  if (version.error) return <ErrorBox error={version.error} />;
  if (!version.data) return <Loading />;
  const current = draft ?? draftOf(version.data.prompt_template, version.data.metadata);
  const ref = { id: template.id, name: template.prompt_name, version: base };
  return (
    <>
      <Section title={`Edit (a draft of v${base})`} actions={draft ? <button type="button" onClick={() => setDraft(null)}>Discard the draft</button> : null}>
        <Editor draft={current} setDraft={setDraft} template={ref} onPublished={() => {
          setDraft(null);
          onPublished();
        }} />
      </Section>
      <Section title="Playground">
        <Playground template={ref} versions={versions} draft={current} latest={template} />
      </Section>
    </>
  );
}

function VersionRow({ id, v, onPick }: { id: string; v: number; onPick: (v: number) => void }) {
  const one = useAsync(() => fetchVersion(id, v), [id, v]);
  return (
    <tr>
      <td>v{v}</td>
      <td>{one.data?.commit_message ?? ""}</td>
      <td>
        <button type="button" onClick={() => onPick(v)} disabled={v === 1}>
          Diff with v{Math.max(1, v - 1)}
        </button>
      </td>
    </tr>
  );
}

function VersionList({ id, latest, onPick }: { id: string; latest: number; onPick: (v: number) => void }) {
  // The newest 20 versions; each is fetched once and kept for the diff.
  const versions = Array.from({ length: Math.min(latest, 20) }, (_, i) => latest - i);
  return (
    <table class="grid">
      <tbody>
        {versions.map((v) => (
          <VersionRow id={id} v={v} key={v} onPick={onPick} />
        ))}
      </tbody>
    </table>
  );
}
