CREATE TABLE `spans` (
	`workspace_id` integer NOT NULL,
	`trace_id` text NOT NULL,
	`span_id` text NOT NULL,
	`parent_span_id` text,
	`name` text NOT NULL,
	`kind` integer DEFAULT 0 NOT NULL,
	`start_time` real NOT NULL,
	`end_time` real NOT NULL,
	`status_code` integer DEFAULT 0 NOT NULL,
	`status_message` text,
	`attributes` text NOT NULL,
	`events` text NOT NULL,
	`links` text NOT NULL,
	`resource` text NOT NULL,
	`scope` text,
	`request_log_id` integer,
	`ingest_id` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	PRIMARY KEY(`workspace_id`, `trace_id`, `span_id`)
);
--> statement-breakpoint
CREATE INDEX `spans_workspace_start` ON `spans` (`workspace_id`,`start_time`);--> statement-breakpoint
CREATE TABLE `trace_closures` (
	`id` text NOT NULL,
	`workspace_id` integer NOT NULL,
	`trace_id` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	PRIMARY KEY(`workspace_id`, `trace_id`)
);
--> statement-breakpoint
ALTER TABLE `request_logs` ADD `trace_id` text;--> statement-breakpoint
ALTER TABLE `request_logs` ADD `span_id` text;--> statement-breakpoint
CREATE UNIQUE INDEX `request_logs_workspace_trace_span` ON `request_logs` (`workspace_id`,`trace_id`,`span_id`);