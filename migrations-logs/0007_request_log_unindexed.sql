CREATE TABLE `request_log_unindexed` (
	`request_id` integer PRIMARY KEY NOT NULL,
	`tools` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
-- Hand-written: a log's full-text entry and daily totals are no longer written by triggers in the
-- log's own transaction but by the indexer, with its side rows and facet counts (src/logs/indexing.ts).
-- A log still in request_log_unindexed has no full-text entry: deleting or re-texting it must not
-- take one out (an FTS5 'delete' of what was never inserted corrupts the index), and its pending row
-- goes with it.
DROP TRIGGER `request_logs_fts_insert`;
--> statement-breakpoint
DROP TRIGGER `request_log_daily_count`;
--> statement-breakpoint
DROP TRIGGER `request_logs_fts_delete`;
--> statement-breakpoint
CREATE TRIGGER `request_logs_fts_delete` AFTER DELETE ON `request_logs` BEGIN
	INSERT INTO request_logs_fts(request_logs_fts, rowid, input_text, output_text)
	SELECT 'delete', old.id, old.input_text, old.output_text WHERE NOT EXISTS (SELECT 1 FROM request_log_unindexed WHERE request_id = old.id);
	DELETE FROM request_log_unindexed WHERE request_id = old.id;
END;
--> statement-breakpoint
DROP TRIGGER `request_logs_fts_update`;
--> statement-breakpoint
CREATE TRIGGER `request_logs_fts_update` AFTER UPDATE OF input_text, output_text ON `request_logs`
WHEN NOT EXISTS (SELECT 1 FROM request_log_unindexed WHERE request_id = new.id) BEGIN
	INSERT INTO request_logs_fts(request_logs_fts, rowid, input_text, output_text) VALUES ('delete', old.id, old.input_text, old.output_text);
	INSERT INTO request_logs_fts(rowid, input_text, output_text) VALUES (new.id, new.input_text, new.output_text);
END;
