CREATE TABLE `request_groups` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `request_log_daily` (
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
	PRIMARY KEY(`workspace_id`, `dim`, `key`, `day`, `bucket`)
);
--> statement-breakpoint
CREATE TABLE `request_log_facets` (
	`id` integer PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`field` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`value_fold` text NOT NULL,
	`count` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `request_log_facets_value` ON `request_log_facets` (`workspace_id`,`field`,`key`,`value`);--> statement-breakpoint
CREATE INDEX `request_log_facets_fold` ON `request_log_facets` (`workspace_id`,`field`,`key`,`value_fold`);--> statement-breakpoint
CREATE INDEX `request_log_facets_count` ON `request_log_facets` (`workspace_id`,`field`,`key`,`count`);--> statement-breakpoint
CREATE TABLE `request_log_values` (
	`id` integer PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`request_id` integer NOT NULL,
	`kind` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	FOREIGN KEY (`request_id`) REFERENCES `request_logs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `request_log_values_probe` ON `request_log_values` (`workspace_id`,`kind`,`key`,`value`,`request_id`);--> statement-breakpoint
CREATE INDEX `request_log_values_request` ON `request_log_values` (`request_id`);--> statement-breakpoint
CREATE TABLE `request_logs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`provider` text NOT NULL,
	`model` text NOT NULL,
	`api_type` text,
	`input` text NOT NULL,
	`output` text NOT NULL,
	`parameters` text NOT NULL,
	`tags` text NOT NULL,
	`metadata` text NOT NULL,
	`prompt_name` text,
	`prompt_id` integer,
	`prompt_version_number` integer,
	`prompt_version_id` integer,
	`prompt_input_variables` text NOT NULL,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`price` real DEFAULT 0 NOT NULL,
	`function_name` text DEFAULT '' NOT NULL,
	`score` integer DEFAULT 0 NOT NULL,
	`score_name` text,
	`scores` text DEFAULT '{}' NOT NULL,
	`group_id` integer,
	`status` text DEFAULT 'SUCCESS' NOT NULL,
	`error_type` text,
	`error_message` text,
	`request_start_time` integer NOT NULL,
	`request_end_time` integer NOT NULL,
	`created_by` integer,
	`api_key_id` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`input_text` text DEFAULT '' NOT NULL,
	`output_text` text DEFAULT '' NOT NULL,
	`output_format` text DEFAULT 'empty' NOT NULL,
	`user_intent` text,
	`agent_intent` text,
	`trace_id` text,
	`span_id` text
);
--> statement-breakpoint
CREATE INDEX `request_logs_workspace_scan` ON `request_logs` (`workspace_id`,`request_start_time`,`request_end_time`,`model`,`provider`,`status`,`price`,`input_tokens`,`output_tokens`,`prompt_id`,`prompt_version_number`,`output_format`);--> statement-breakpoint
CREATE INDEX `request_logs_workspace_prompt` ON `request_logs` (`workspace_id`,`prompt_id`,`prompt_version_number`);--> statement-breakpoint
CREATE INDEX `request_logs_workspace_model_status` ON `request_logs` (`workspace_id`,`model`,`status`);--> statement-breakpoint
CREATE INDEX `request_logs_workspace_provider_latency` ON `request_logs` (`workspace_id`,`provider`,("request_end_time" - "request_start_time"));--> statement-breakpoint
CREATE INDEX `request_logs_workspace_price_start` ON `request_logs` (`workspace_id`,`price`,`request_start_time`);--> statement-breakpoint
CREATE INDEX `request_logs_workspace_group` ON `request_logs` (`workspace_id`,`group_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `request_logs_workspace_trace_span` ON `request_logs` (`workspace_id`,`trace_id`,`span_id`);--> statement-breakpoint
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
CREATE INDEX `spans_workspace_parent` ON `spans` (`workspace_id`,`trace_id`,`parent_span_id`);--> statement-breakpoint
CREATE INDEX `spans_workspace_ingest` ON `spans` (`workspace_id`,`ingest_id`);--> statement-breakpoint
CREATE TABLE `trace_closures` (
	`id` text NOT NULL,
	`workspace_id` integer NOT NULL,
	`trace_id` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	PRIMARY KEY(`workspace_id`, `trace_id`)
);
