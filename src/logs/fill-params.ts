// What a dataset fill job is: its parameters and the bounds the draft flow and the fill share.
import type { FilterGroup } from "../filters";
import type { LogMark } from "./readers";
import type { SortBy } from "./search";

/** The interface's bound: one fill job copies at most this many request logs. */
export const MAX_LOGS_PER_JOB = 50_000;
/** The draft of a group is its dataset with this version number. */
export const DRAFT_VERSION = -1;

export interface FillParams {
  request_log_ids?: number[] | null;
  filter_group?: FilterGroup | null;
  q?: string | null;
  sort_by?: SortBy | null;
  sort_order?: "asc" | "desc" | null;
  variables_to_parse?: string[] | null;
  limit?: number | null;
  /** Only the logs in this mark (the logs that existed when it was taken): a job that reads the filter again (a redelivery) sees the same logs. */
  max_log_id?: LogMark | null;
  /** create-draft from an existing version: the job copies that version's rows instead of querying logs. */
  source_dataset_id?: number | null;
  /** from-file: the job loads the rows of this stored file instead of querying logs. */
  file?: FileFillParams | null;
}

/** A stored file a from-file job loads, and what the request found in it when it read it whole. */
export interface FileFillParams {
  blob_key: string;
  file_name: string;
  format: "csv" | "json";
  bytes: number;
  rows: number;
  columns: string[];
}
