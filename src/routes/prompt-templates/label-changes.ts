// Protected release labels and their change requests (PromptLayer's approval flow): a label marked
// protected moves only when a change request for it (asked by PATCH /prompt-labels/{id}, or by an A/B
// release's promote) is approved; approve and deny emit prompt_template_label_change_approved /
// _denied, and an approval moves the label through the label-move path (prompt_template_label_moved).
import { z, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../env";
import { defineRoute } from "../../http/openapi";
import { purgesPromptCache } from "../../http/prompt-cache";
import { IdParam } from "../../lib/schemas";
import { QueryInt } from "../../lib/query";
import { changeRequestViews, labelView, listChangeRequests, requireChangeRequest, setLabelProtection } from "../../services/registry";
import { decideChangeRequest } from "../../services/releases";
import { findPromptVersion } from "../../prompts";
import { ChangeRequest, ChangeRequestAnswer, ReleaseLabel } from "./schemas";

const json = <T extends z.ZodType>(schema: T, description: string) => ({ description, content: { "application/json": { schema } } });
const tags = ["release labels"];
const BASE = "/api/public/v2/label-change-requests";
const idParams = z.object({ change_request_id: IdParam("change_request_id") });

const protection = defineRoute({
  method: "put",
  path: "/api/public/v2/prompt-labels/{prompt_label_id}/protection",
  // Protecting a label and deciding its moves govern what every prompts:write key may do: admin only.
  scope: "admin",
  tags,
  summary: "Protect a release label, or stop protecting it",
  description:
    "A protected label moves only through an approved change request: PATCH /prompt-labels/{id} answers the label unmoved with a pending `change_request`, and an A/B " +
    "release's promote answers 202 with one, instead of moving it; a publish or patch naming it in release_labels is a 409, and deleting it is a 409 until it is unprotected.",
  errors: [404],
  request: {
    params: z.object({ prompt_label_id: IdParam("prompt_label_id") }),
    body: { required: true, content: { "application/json": { schema: z.object({ protected: z.boolean() }).openapi("LabelProtection") } } },
  },
  responses: { 200: json(ReleaseLabel, "The label") },
});

const list = defineRoute({
  method: "get",
  path: BASE,
  scope: "prompts:read",
  tags,
  summary: "List change requests of protected labels",
  description: "The requested moves of protected release labels, newest first (page, per_page 1..100, default 30); `status` and `prompt_template_id` narrow it.",
  request: {
    query: z.object({
      status: z.enum(["pending", "approved", "denied"], { error: "must be pending, approved or denied" }).optional(),
      prompt_template_id: QueryInt(1).optional(),
      page: QueryInt(1).default(1),
      per_page: QueryInt(1, 100).default(30),
    }),
  },
  responses: {
    200: json(z.object({ success: z.literal(true), change_requests: z.array(ChangeRequest), page: z.int(), per_page: z.int(), total: z.int(), pages: z.int() }).openapi("LabelChangeRequestList"), "One page"),
  },
});

const get = defineRoute({
  method: "get",
  path: `${BASE}/{change_request_id}`,
  scope: "prompts:read",
  tags,
  summary: "Get a change request",
  description: "A protected label's requested move: the label, the versions from and to, its status (pending, approved, denied), who asked and who decided, and the A/B release whose promote asked for it. Another workspace's id is a 404.",
  errors: [404],
  request: { params: idParams },
  responses: { 200: json(ChangeRequestAnswer, "The change request") },
});

const decide = (verb: "approve" | "deny") =>
  defineRoute({
    method: "post",
    path: `${BASE}/{change_request_id}/${verb}`,
    scope: "admin",
    tags,
    summary: verb === "approve" ? "Approve a protected label's move" : "Deny a protected label's move",
    description:
      verb === "approve"
        ? "Emits prompt_template_label_change_approved and moves the label (prompt_template_label_moved); a request an A/B release's promote asked for completes that release as promoted (ab_test_promoted). A request decided already is a 409."
        : "Emits prompt_template_label_change_denied; the label stays. A release whose promote asked for it runs on at its split. A request decided already is a 409.",
    errors: [404, 409],
    middleware: [purgesPromptCache],
    request: { params: idParams },
    responses: { 200: json(ChangeRequestAnswer, "The decided request") },
  });

export function registerLabelChangeRoutes(app: OpenAPIHono<AppEnv>) {
  app.openapi(protection, async (c) => {
    const { prompt_label_id } = c.req.valid("param");
    const ws = c.get("auth").workspaceId;
    const db = c.var.deps.db;
    const row = await setLabelProtection(db, c.get("auth"), prompt_label_id, c.req.valid("json").protected);
    const found = await findPromptVersion(db, ws, { id: row.promptId, label: row.name });
    return c.json(labelView(row, found?.version.version ?? 0), 200);
  });

  app.openapi(list, async (c) => c.json({ success: true as const, ...(await listChangeRequests(c.var.deps.db, c.get("auth").workspaceId, c.req.valid("query"))) }, 200));

  app.openapi(get, async (c) => {
    const { change_request_id } = c.req.valid("param");
    const db = c.var.deps.db;
    const [change_request] = await changeRequestViews(db, [await requireChangeRequest(db, c.get("auth").workspaceId, change_request_id)]);
    return c.json({ success: true as const, change_request }, 200);
  });

  for (const [verb, decision] of [["approve", "approved"], ["deny", "denied"]] as const) {
    app.openapi(decide(verb), async (c) => {
      const { change_request_id } = c.req.valid("param");
      return c.json({ success: true as const, change_request: await decideChangeRequest(c.var.deps.db, c.get("auth"), change_request_id, decision) }, 200);
    });
  }
}
