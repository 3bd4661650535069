// The answers the console reads and the bodies it writes, as the API's own zod schemas define them
// (type imports only: nothing of the server is bundled). Where a route wraps a schema inline, the
// wrapper is spelled here around the exported piece.
import type { z } from "zod";
import type { Dataset, DatasetList, DatasetPreview, DraftResponse, FillQueued } from "../../src/routes/datasets/schemas";
import type { EnvVar } from "../../src/routes/env-vars/schemas";
import type { FolderEntity } from "../../src/routes/folders/schemas";
import type { GetReportResponse, ListEvaluationsResponse, RunBody } from "../../src/routes/evaluations/schemas";
import type { ListTemplates, PublishBody, PublishedTemplate, TemplateLabels, TemplateVersion } from "../../src/routes/prompt-templates/schemas";
import type { PromptRunBody, PromptRunDelta, PromptRunResult } from "../../src/routes/prompt-runs/schemas";
import type { CellSchema, ColumnSchema, CreateColumnBody } from "../../src/routes/sheet-data/schemas";
import type { TraceSummary } from "../../src/routes/traces/schemas";
import type { TrackMetadataBody, TrackResponse, TrackScoreBody } from "../../src/routes/tracking/schemas";

type Out<S extends z.ZodType> = z.output<S>;
type In<S extends z.ZodType> = z.input<S>;

export type TemplateVersionT = Out<typeof TemplateVersion>;
export type TemplateListT = Out<typeof ListTemplates>;
export type TemplateLabelsT = Out<typeof TemplateLabels>;
export type PublishBodyT = In<typeof PublishBody>;
export type PublishedT = Out<typeof PublishedTemplate>;

export type PromptRunBodyT = In<typeof PromptRunBody>;
export type PromptRunT = Out<typeof PromptRunResult>;
export type PromptRunDeltaT = Out<typeof PromptRunDelta>;

export type EnvVarT = Out<typeof EnvVar>;
export interface EnvVarListT {
  success: true;
  workspace_env_vars: EnvVarT[];
}

export type DatasetT = Out<typeof Dataset>;
export type DatasetListT = Out<typeof DatasetList>;
export type DatasetPreviewT = Out<typeof DatasetPreview>;
export type FillQueuedT = Out<typeof FillQueued>;
export type DraftResponseT = Out<typeof DraftResponse>;

export type TrackScoreBodyT = In<typeof TrackScoreBody>;
export type TrackMetadataBodyT = In<typeof TrackMetadataBody>;
export type TrackResponseT = Out<typeof TrackResponse>;

export type EvaluationListT = Out<typeof ListEvaluationsResponse>;
export type ReportT = Out<typeof GetReportResponse>;
export type RunBodyT = In<typeof RunBody>;
/** POST /reports/{id}/run answers the run's id. */
export interface RunStartedT {
  success: true;
  report_id: number;
}

export type CellT = Out<typeof CellSchema>;
export type ColumnT = Out<typeof ColumnSchema>;
export type CreateColumnBodyT = In<typeof CreateColumnBody>;
/** PATCH …/cells/{cell_id}: the cell, the sheet's new version and how many cells went stale. */
export interface CellEditedT {
  success: true;
  cell: CellT;
  version: number;
  stale_count: number;
}

export type FolderEntityT = Out<typeof FolderEntity>;
export interface FolderEntitiesT {
  success: true;
  entities: FolderEntityT[];
}

export type TraceSummaryT = Out<typeof TraceSummary>;
/** POST /api/public/v2/traces/search by cursor (limit, cursor). */
export interface TraceSearchPageT {
  success: true;
  items: TraceSummaryT[];
  next_cursor: string | null;
  has_more: boolean;
  limit: number;
}
