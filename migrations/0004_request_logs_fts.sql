-- Free-text search (`q`) over the input and output text of request logs: an FTS5 index whose content
-- is request_logs itself (no second copy of the text), kept in step by triggers, so every write
-- path (log-request, imports, benchmarks' seeders) indexes the same way.
CREATE VIRTUAL TABLE `request_logs_fts` USING fts5(
	input_text, output_text,
	content='request_logs', content_rowid='id',
	tokenize='unicode61 remove_diacritics 2'
);
--> statement-breakpoint
CREATE TRIGGER `request_logs_fts_insert` AFTER INSERT ON `request_logs` BEGIN
	INSERT INTO request_logs_fts(rowid, input_text, output_text) VALUES (new.id, new.input_text, new.output_text);
END;
--> statement-breakpoint
CREATE TRIGGER `request_logs_fts_delete` AFTER DELETE ON `request_logs` BEGIN
	INSERT INTO request_logs_fts(request_logs_fts, rowid, input_text, output_text) VALUES ('delete', old.id, old.input_text, old.output_text);
END;
--> statement-breakpoint
CREATE TRIGGER `request_logs_fts_update` AFTER UPDATE OF input_text, output_text ON `request_logs` BEGIN
	INSERT INTO request_logs_fts(request_logs_fts, rowid, input_text, output_text) VALUES ('delete', old.id, old.input_text, old.output_text);
	INSERT INTO request_logs_fts(rowid, input_text, output_text) VALUES (new.id, new.input_text, new.output_text);
END;
