// Pure: renders an OpenAPI 3.1 document as one self-contained HTML page (no external assets, so
// /docs works offline and behind strict CSPs).

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

function esc(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function anchor(...parts: string[]): string {
  return parts.join("-").replace(/[^A-Za-z0-9_-]+/g, "-");
}

/** Pretty JSON with every "$ref" turned into a link to its schema below. */
function schemaHtml(schema: Json | undefined): string {
  if (schema === undefined) return "";
  const text = esc(JSON.stringify(schema, null, 2));
  return `<pre>${text.replace(/&quot;#\/components\/schemas\/([^&]+)&quot;/g, (_m, name: string) => `<a href="#schema-${anchor(name)}">${esc(name)}</a>`)}</pre>`;
}

function typeOf(schema: Json | undefined): string {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return "";
  const s = schema as Obj;
  if (typeof s.$ref === "string") return s.$ref.split("/").pop() ?? "";
  if (Array.isArray(s.enum)) return `enum: ${s.enum.join(", ")}`;
  if (typeof s.type === "string") return s.type;
  return "";
}

function operationHtml(path: string, method: string, op: Obj): string {
  const id = anchor("op", method, path);
  const params = Array.isArray(op.parameters) ? (op.parameters as Obj[]) : [];
  const paramRows = params
    .map(
      (p) =>
        `<tr><td><code>${esc(String(p.name))}</code></td><td>${esc(String(p.in))}</td><td>${p.required ? "yes" : "no"}</td><td>${esc(typeOf(p.schema))}</td><td>${esc(String(p.description ?? (p.schema as Obj | undefined)?.description ?? ""))}</td></tr>`,
    )
    .join("");
  const body = (op.requestBody as Obj | undefined)?.content as Obj | undefined;
  const bodyHtml = body
    ? Object.entries(body)
        .map(([type, media]) => `<h4>Body <code>${esc(type)}</code></h4>${schemaHtml((media as Obj).schema)}`)
        .join("")
    : "";
  const responses = Object.entries((op.responses as Obj) ?? {})
    .map(([status, r]) => {
      const res = r as Obj;
      const content = res.content as Obj | undefined;
      const schema = content ? Object.values(content).map((m) => (m as Obj).schema)[0] : undefined;
      return `<li><b>${esc(status)}</b> ${esc(String(res.description ?? ""))}${schema ? ` ${schemaHtml(schema)}` : ""}</li>`;
    })
    .join("");
  const auth = Array.isArray(op.security) && op.security.length === 0 ? "no key" : "X-API-KEY";
  return `<section id="${id}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3>
<p><b>${esc(String(op.summary ?? ""))}</b> <span class="auth">${auth}</span></p>
${op.description ? `<p>${esc(String(op.description))}</p>` : ""}
${paramRows ? `<table><tr><th>name</th><th>in</th><th>required</th><th>type</th><th>notes</th></tr>${paramRows}</table>` : ""}
${bodyHtml}<h4>Responses</h4><ul>${responses}</ul></section>`;
}

export function renderDocs(doc: Obj): string {
  const info = (doc.info as Obj) ?? {};
  const paths = (doc.paths as Obj) ?? {};
  const ops: { tag: string; path: string; method: string; op: Obj }[] = [];
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = (item as Obj)[method] as Obj | undefined;
      if (op) ops.push({ tag: String((op.tags as string[] | undefined)?.[0] ?? "other"), path, method, op });
    }
  }
  // The API's own resources first, alphabetically; the "meta" routes (health, docs) last.
  const rank = (tag: string) => (tag === "meta" ? 1 : 0);
  ops.sort((a, b) => rank(a.tag) - rank(b.tag) || a.tag.localeCompare(b.tag) || a.path.localeCompare(b.path));
  const toc = ops
    .map((o) => `<li><a href="#${anchor("op", o.method, o.path)}">${o.method.toUpperCase()} ${esc(o.path)}</a> <small>${esc(o.tag)}</small></li>`)
    .join("");
  const schemas = ((doc.components as Obj | undefined)?.schemas as Obj | undefined) ?? {};
  const schemaSections = Object.entries(schemas)
    .map(([name, s]) => `<section id="schema-${anchor(name)}"><h3>${esc(name)}</h3>${schemaHtml(s)}</section>`)
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(String(info.title ?? "API"))} reference</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#1d1d1f}
pre{background:#f5f5f7;padding:.6em;overflow:auto;font-size:12px;max-height:28em}code{font-size:13px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left;font-size:13px}
section{border-top:1px solid #eee;padding-top:.5em}.m{padding:.1em .4em;border-radius:3px;color:#fff;font-size:12px}
.get{background:#2f7d32}.post{background:#1f5fbf}.patch{background:#a36b00}.put{background:#7a3fb0}.delete{background:#b3261e}
.auth{color:#666;font-size:12px}</style></head><body>
<h1>${esc(String(info.title ?? "API"))} <small>${esc(String(info.version ?? ""))}</small></h1>
<p>${esc(String(info.description ?? ""))}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI ${esc(String(doc.openapi ?? ""))}).</p>
<h2>Endpoints</h2><ul>${toc}</ul><h2>Operations</h2>${ops.map((o) => operationHtml(o.path, o.method, o.op)).join("")}
<h2>Schemas</h2>${schemaSections}</body></html>`;
}
