// What the A/B release tests share: a completion template published through the REST route.
import { expect } from "vitest";
import { call, json } from "./api";

export const AB = "/api/public/v2/ab-tests";
export const uniq = (p: string) => `${p}-${crypto.randomUUID().slice(0, 8)}`;
export const completion = (text: string) => ({ type: "completion", content: [{ type: "text", text }] });

/** Publishes a version of template `name` with `text`, moving `labels` onto it. */
export async function publish(key: string, name: string, text: string, labels: string[] = []) {
  const res = await call("/rest/prompt-templates", { method: "POST", key, json: { prompt_template: { prompt_name: name }, prompt_version: { prompt_template: completion(text) }, release_labels: labels } });
  expect(res.status).toBe(200);
  return json(res);
}
