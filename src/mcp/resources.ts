// MCP resources: a prompt template (at a label or version), a logged request and a trace, each
// read through the door as the REST route answers it (JSON). resources/list pages through the
// templates by name, then the logged requests newest first, then the traces newest first.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { apiFailure } from "./read-errors";
import type { ApiDoor } from "./door";

const RESOURCE_SCHEME = "promptedge:";
/** Resources per resources/list page. */
const RESOURCES_PAGE_SIZE = 50;

interface McpResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: string;
}

const JSON_TYPE = "application/json";

export const RESOURCE_TEMPLATES = [
  {
    uriTemplate: "promptedge://prompts/{name}{?label,version}",
    name: "prompt-template",
    title: "Prompt template",
    description: "A prompt template as stored (snippets expanded), at its latest version, or at ?label=… or ?version=…",
    mimeType: JSON_TYPE,
  },
  { uriTemplate: "promptedge://requests/{id}", name: "request", title: "Logged request", description: "One logged LLM request, as get-request answers it.", mimeType: JSON_TYPE },
  { uriTemplate: "promptedge://traces/{id}", name: "trace", title: "Trace", description: "Every span of a trace, as get-trace answers it.", mimeType: JSON_TYPE },
];

const notFound = (uri: string) => new McpError(-32002, `Resource not found: ${uri}`, { uri });

/** The REST path a resource URI reads, or why the URI names no resource. */
function resourcePath(uri: string): string | McpError {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return new McpError(ErrorCode.InvalidParams, `uri: ${uri} is not a URI`);
  }
  const segments = url.pathname.split("/").filter(Boolean);
  if (url.protocol !== RESOURCE_SCHEME || segments.length !== 1) return notFound(uri);
  const id = segments[0];
  switch (url.hostname) {
    case "prompts": {
      const query = new URLSearchParams();
      for (const name of ["label", "version"]) {
        const v = url.searchParams.get(name);
        if (v !== null) query.set(name, v);
      }
      const qs = query.toString();
      return `/prompt-templates/${id}${qs ? `?${qs}` : ""}`;
    }
    case "requests":
      return `/api/public/v2/requests/${id}`;
    case "traces":
      return `/api/public/v2/traces/${id}`;
    default:
      return notFound(uri);
  }
}

export async function readResource(door: ApiDoor, key: string, uri: string) {
  const path = resourcePath(uri);
  if (path instanceof McpError) throw path;
  const res = await door.send("GET", path, key);
  if (res.status === 404) {
    await res.body?.cancel();
    throw notFound(uri);
  }
  if (!res.ok) throw await apiFailure(res, uri);
  return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(await res.json(), null, 2) }] };
}

type Page = { resources: McpResource[]; next?: string };

async function promptPage(door: ApiDoor, key: string, page: number): Promise<Page> {
  const res = await door.send("GET", `/prompt-templates?page=${page}&per_page=${RESOURCES_PAGE_SIZE}&sort_by=name&sort_order=asc`, key);
  if (!res.ok) throw await apiFailure(res, "prompt templates");
  const list = (await res.json()) as { items: { prompt_name: string; version: number }[]; has_next: boolean };
  return {
    resources: list.items.map((t) => ({
      uri: `promptedge://prompts/${encodeURIComponent(t.prompt_name)}`,
      name: t.prompt_name,
      title: t.prompt_name,
      description: `Prompt template, latest version ${t.version}`,
      mimeType: JSON_TYPE,
    })),
    next: list.has_next ? `prompts:${page + 1}` : "requests:1",
  };
}

async function requestPage(door: ApiDoor, key: string, page: number): Promise<Page> {
  const res = await door.send("POST", "/api/public/v2/requests/search", key, { page, per_page: RESOURCES_PAGE_SIZE, sort_by: "request_start_time", sort_order: "desc" });
  if (!res.ok) throw await apiFailure(res, "requests");
  const list = (await res.json()) as { items: { id: number; engine: string | null; prompt_name?: string | null; request_start_time: string }[]; has_next: boolean };
  return {
    resources: list.items.map((r) => ({
      uri: `promptedge://requests/${r.id}`,
      name: `request ${r.id}`,
      description: [r.engine, r.prompt_name ? `prompt ${r.prompt_name}` : null, r.request_start_time].filter(Boolean).join(", "),
      mimeType: JSON_TYPE,
    })),
    next: list.has_next ? `requests:${page + 1}` : "traces:",
  };
}

async function tracePage(door: ApiDoor, key: string, cursor: string): Promise<Page> {
  const res = await door.send("POST", "/api/public/v2/traces/search", key, cursor ? { cursor, limit: RESOURCES_PAGE_SIZE } : { limit: RESOURCES_PAGE_SIZE });
  if (!res.ok) throw await apiFailure(res, "traces");
  const list = (await res.json()) as { items: { trace_id: string; trace_name: string | null; trace_start: string }[]; next_cursor: string | null; has_more: boolean };
  return {
    resources: list.items.map((t) => ({
      uri: `promptedge://traces/${encodeURIComponent(t.trace_id)}`,
      name: t.trace_name ?? `trace ${t.trace_id}`,
      description: `Trace ${t.trace_id}, started ${t.trace_start}`,
      mimeType: JSON_TYPE,
    })),
    next: list.has_more && list.next_cursor ? `traces:${list.next_cursor}` : undefined,
  };
}

/**
 * One page of resources. The cursor says which list and where in it ("prompts:2", "requests:1",
 * "traces:<the trace search's cursor>"); a list that has nothing more hands over to the next one
 * within the same call, so a page is empty only when everything has been listed.
 */
export async function listResources(door: ApiDoor, key: string, cursor: string | undefined): Promise<{ resources: McpResource[]; nextCursor?: string }> {
  let at = cursor ?? "prompts:1";
  for (;;) {
    const colon = at.indexOf(":");
    const kind = at.slice(0, colon);
    const rest = at.slice(colon + 1);
    const page = Number(rest);
    let result: Page;
    if (kind === "traces") result = await tracePage(door, key, rest);
    else if ((kind === "prompts" || kind === "requests") && Number.isSafeInteger(page) && page >= 1) {
      result = kind === "prompts" ? await promptPage(door, key, page) : await requestPage(door, key, page);
    } else throw new McpError(ErrorCode.InvalidParams, "cursor: not one resources/list gave");
    if (result.resources.length > 0 || !result.next) return result.next ? { resources: result.resources, nextCursor: result.next } : { resources: result.resources };
    at = result.next;
  }
}
