#!/usr/bin/env node
// Writes docs/mcp.md's tool list from the MCP tool table (src/mcp/tools.ts) and the API's OpenAPI
// document, with the same code that answers tools/list, so the list cannot drift from the server
// (test/routes/mcp.test.ts fails when the file differs from what this writes).
// `npm run docs:mcp` rewrites the section between its two markers; `--check` only says whether it differs.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { withAppModules } from "./lib/api-types.mjs";
import { ROOT } from "./lib/wrangler.mjs";

const FILE = join(ROOT, "docs", "mcp.md");

const section = await withAppModules(async (load) => {
  const { createApp } = await load("/src/app.ts");
  const mcp = await load("/src/mcp/index.ts");
  const log = console.log;
  console.log = () => {}; // the request's own log line
  try {
    const doc = await (await createApp().request("/openapi.json", {}, {})).json();
    return { text: mcp.toolListMarkdown(doc), start: mcp.TOOL_LIST_START, end: mcp.TOOL_LIST_END };
  } finally {
    console.log = log;
  }
});

const current = readFileSync(FILE, "utf8");
const { start: TOOL_LIST_START, end: TOOL_LIST_END } = section;
const start = current.indexOf(TOOL_LIST_START);
const end = current.indexOf(TOOL_LIST_END);
if (start < 0 || end < start) {
  console.error(`docs/mcp.md has no tool list markers (${TOOL_LIST_START} … ${TOOL_LIST_END})`);
  process.exit(2);
}
const next = current.slice(0, start) + section.text + current.slice(end + TOOL_LIST_END.length);
if (process.argv.includes("--check")) {
  console.log(next === current ? "docs/mcp.md's tool list is up to date" : "docs/mcp.md's tool list differs: run `npm run docs:mcp`");
  process.exit(next === current ? 0 : 1);
}
if (next !== current) writeFileSync(FILE, next);
console.log(next === current ? "docs/mcp.md's tool list was up to date" : "docs/mcp.md's tool list rewritten");
