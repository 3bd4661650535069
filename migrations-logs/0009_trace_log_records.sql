CREATE TABLE `trace_log_records` (
	`id` integer PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`trace_id` text NOT NULL,
	`span_id` text,
	`record_key` text NOT NULL,
	`time` real NOT NULL,
	`observed_time` real,
	`severity_number` integer DEFAULT 0 NOT NULL,
	`severity_text` text,
	`event_name` text,
	`body` text,
	`attributes` text NOT NULL,
	`resource` text NOT NULL,
	`scope` text,
	`flags` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `trace_log_records_key` ON `trace_log_records` (`workspace_id`,`trace_id`,`record_key`);--> statement-breakpoint
CREATE INDEX `trace_log_records_span` ON `trace_log_records` (`workspace_id`,`trace_id`,`span_id`,`time`);--> statement-breakpoint
ALTER TABLE `spans` ADD `log_from_span` integer DEFAULT false NOT NULL;