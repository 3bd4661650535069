ALTER TABLE `request_logs` ADD `redactions` text;--> statement-breakpoint
CREATE INDEX `request_logs_workspace_redacted` ON `request_logs` (`workspace_id`,`request_start_time`) WHERE "request_logs"."redactions" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `spans` ADD `redactions` text;--> statement-breakpoint
ALTER TABLE `trace_log_records` ADD `redactions` text;