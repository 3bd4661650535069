-- Hand-written: every new request log is unindexed, whoever inserts it. The writers mark their logs
-- with the tool names the indexer needs (an upsert over this row); a log inserted by anything else
-- (a Worker still running the version before deferred indexing, in the minutes between the
-- migrations and the deploy) is marked here, without tool names, so the sweeper indexes it and the
-- full-text triggers never delete an entry that was not inserted (which FTS5 reports as corruption).
CREATE TRIGGER `request_logs_mark_unindexed` AFTER INSERT ON `request_logs` BEGIN
	INSERT INTO request_log_unindexed (request_id, tools) VALUES (new.id, '[]') ON CONFLICT(request_id) DO NOTHING;
END;
