-- The layout of a log's search index (issue 37): what a log costs in rows written, D1's bill. Generated
-- by drizzle-kit from src/db/schema/requests.ts, then the data moves and what drizzle cannot express
-- written by hand; the same file is the control database's migrations/0034 (its log tables).
--
-- Before: ten search side rows a log with two index entries each (request_log_values), a full-text
-- entry of the texts (request_logs_fts), a mark written with the log and deleted by the indexer
-- (request_log_unindexed), facet rows with three indexes, seven indexes on request_logs.
-- After: the keyed values in the row (its tags and metadata as they stand, the rest in
-- request_logs.extra_values), one entry a log in
-- request_log_search (its texts and a token per keyed value, the id of the value's facet row), a
-- watermark per database instead of the marks (log_index_state; daily totals counted a larger batch of
-- logs at a time, behind a watermark of their own), facet rows clustered by their key
-- with one partial index, and the indexes on request_logs that only some logs need made partial.
--
-- Every log indexed before this migration keeps its facet counts and daily totals (untouched); its
-- search entry and its extra_values are written afterwards by a background move, a bounded batch at
-- a time, newest first, from its row (src/logs/layout-move.ts: the cron, and every snapshot before it
-- selects), which starts at the newest log (request_log_layout_move, handed on to
-- log_index_state.moved_to by logs 0014 / migrations 0040). An earlier version of this file moved
-- every log here, in one statement each for the extra values and the search entries: on 100,000 logs
-- one took 57 s, and D1 stops a statement at 30 s (docs/decisions.md). The logs not yet indexed stay
-- listed in request_log_unindexed and the indexer takes them first. Nothing is counted twice: the
-- watermark starts at the newest log, a log is indexed past it or from that list, once, and the move
-- counts nothing.
CREATE TABLE `log_index_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`indexed_to` integer NOT NULL,
	`counted_to` integer NOT NULL,
	`next_facet_id` integer NOT NULL
);
--> statement-breakpoint
INSERT INTO `log_index_state` (`id`, `indexed_to`, `counted_to`, `next_facet_id`)
VALUES (1, coalesce((SELECT max(`id`) FROM `request_logs`), 0), coalesce((SELECT max(`id`) FROM `request_logs`), 0), coalesce((SELECT max(`id`) FROM `request_log_facets`), 0) + 1);
--> statement-breakpoint
ALTER TABLE `request_logs` ADD `extra_values` text;
--> statement-breakpoint
-- Where the background move of the logs indexed before starts: at the newest log (every log up to
-- it that is not listed in request_log_unindexed has no search entry and no extra_values yet).
CREATE TABLE `request_log_layout_move` (`id` integer PRIMARY KEY NOT NULL, `moved_to` integer NOT NULL);
--> statement-breakpoint
INSERT INTO `request_log_layout_move` (`id`, `moved_to`) VALUES (1, coalesce((SELECT max(`id`) FROM `request_logs`), 0));
--> statement-breakpoint
-- Facet rows keep their ids (the search entries' tokens) and counts; a fold equal to the value is left out.
CREATE TABLE `__new_request_log_facets` (
	`workspace_id` integer NOT NULL,
	`field` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`value_fold` text,
	`count` integer DEFAULT 0 NOT NULL,
	`id` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `field`, `key`, `value`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_request_log_facets`("workspace_id", "field", "key", "value", "value_fold", "count", "id")
SELECT "workspace_id", "field", "key", "value", CASE WHEN "value_fold" = "value" THEN NULL ELSE "value_fold" END, "count", "id" FROM `request_log_facets` WHERE "count" > 0;
--> statement-breakpoint
DROP TABLE `request_log_facets`;
--> statement-breakpoint
ALTER TABLE `__new_request_log_facets` RENAME TO `request_log_facets`;
--> statement-breakpoint
CREATE INDEX `request_log_facets_fold` ON `request_log_facets` (`workspace_id`,`field`,`key`,`value_fold`) WHERE "request_log_facets"."value_fold" IS NOT NULL;
--> statement-breakpoint
-- The search index (src/db/schema/requests.ts, REQUEST_LOGS_FTS): contentless, entries replaced or
-- deleted by rowid, column detail only. The logs indexed before get their entries from the move.
CREATE VIRTUAL TABLE `request_log_search` USING fts5(
	input_text, output_text, keys,
	content='', contentless_delete=1, detail=column,
	tokenize='unicode61 remove_diacritics 2'
);
--> statement-breakpoint
DROP TRIGGER `request_logs_fts_delete`;
--> statement-breakpoint
DROP TRIGGER `request_logs_fts_update`;
--> statement-breakpoint
DROP TRIGGER `request_logs_mark_unindexed`;
--> statement-breakpoint
DROP TABLE `request_logs_fts`;
--> statement-breakpoint
DROP TABLE `request_log_values`;
--> statement-breakpoint
-- A deleted log's search entry goes with it (deleting an entry a log never had changes nothing), and so
-- does its place in the list of logs from before the watermark.
CREATE TRIGGER `request_log_search_delete` AFTER DELETE ON `request_logs` BEGIN
	DELETE FROM request_log_search WHERE rowid = old.id;
	DELETE FROM request_log_unindexed WHERE request_id = old.id;
END;
--> statement-breakpoint
DROP INDEX `request_logs_workspace_prompt`;
--> statement-breakpoint
DROP INDEX `request_logs_workspace_group`;
--> statement-breakpoint
DROP INDEX `request_logs_workspace_trace_span`;
--> statement-breakpoint
CREATE INDEX `request_logs_workspace_prompt` ON `request_logs` (`workspace_id`,`prompt_id`,`prompt_version_number`) WHERE "request_logs"."prompt_id" IS NOT NULL;
--> statement-breakpoint
CREATE INDEX `request_logs_workspace_group` ON `request_logs` (`workspace_id`,`group_id`) WHERE "request_logs"."group_id" IS NOT NULL;
--> statement-breakpoint
CREATE UNIQUE INDEX `request_logs_workspace_trace_span` ON `request_logs` (`workspace_id`,`trace_id`,`span_id`) WHERE "request_logs"."trace_id" IS NOT NULL OR "request_logs"."span_id" IS NOT NULL;
--> statement-breakpoint
-- Daily totals clustered by (workspace, dimension, day, value, bucket): analytics reads a window of days
-- of a dimension, every value of it, as one range (by value first, it read every day of every value).
CREATE TABLE `__new_request_log_daily` (
	`workspace_id` integer NOT NULL,
	`dim` text NOT NULL,
	`day` integer NOT NULL,
	`key` text NOT NULL,
	`bucket` integer NOT NULL,
	`requests` integer NOT NULL,
	`input_tokens` integer NOT NULL,
	`output_tokens` integer NOT NULL,
	`cost` real NOT NULL,
	`latency_ms` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `dim`, `day`, `key`, `bucket`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_request_log_daily`("workspace_id", "dim", "day", "key", "bucket", "requests", "input_tokens", "output_tokens", "cost", "latency_ms") SELECT "workspace_id", "dim", "day", "key", "bucket", "requests", "input_tokens", "output_tokens", "cost", "latency_ms" FROM `request_log_daily`;
--> statement-breakpoint
DROP TABLE `request_log_daily`;
--> statement-breakpoint
ALTER TABLE `__new_request_log_daily` RENAME TO `request_log_daily`;
