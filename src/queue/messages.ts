// Job messages on the JOBS queue: small (ids and keys, never payloads, well under 128 KB), versioned,
// validated on the way in and on the way out. A new kind of job adds its message to this union.
import { z } from "zod";

/** Wraps a job body with the envelope fields every message carries. */
export const envelope = <K extends string, B extends z.ZodRawShape>(kind: K, body: B) =>
  z.object({ v: z.literal(1), kind: z.literal(kind), workspace_id: z.int().positive(), ...body });

/** Checks that the queue path works end to end (used by tests and `npm run dev` smoke checks). */
export const PingJob = envelope("ping", { token: z.string().max(200) });

/** Runs (or resumes) one workflow execution; the rows it works on say what is left to do. */
export const WorkflowRunJob = envelope("workflow_run", { execution_id: z.int().positive() });

/** Fills a dataset draft (from-filter-params, create-draft from a version, from-file); the job row holds the parameters. */
export const DatasetFillJob = envelope("dataset_fill", { job_id: z.int().positive() });

/** Runs (or resumes) a sheet import; everything else it needs is on the operation row. */
export const SheetImportJob = envelope("sheet_import", { operation_id: z.string().min(1).max(255) });

/** Makes the next attempt of one webhook delivery (event × webhook); the delivery row holds the rest. */
export const WebhookDeliveryJob = envelope("webhook_delivery", { delivery_id: z.string().min(1).max(64) });

/** Evaluates the next batch of an evaluation run's rows (and queues itself again while rows are left). */
export const EvaluationRunJob = envelope("evaluation_run", { report_id: z.int().positive() });

export const JobMessage = z.discriminatedUnion("kind", [PingJob, WorkflowRunJob, DatasetFillJob, SheetImportJob, WebhookDeliveryJob, EvaluationRunJob]);
export type JobMessage = z.infer<typeof JobMessage>;

export async function enqueue(queue: Queue, message: JobMessage): Promise<void> {
  await queue.send(JobMessage.parse(message), { contentType: "json" });
}
