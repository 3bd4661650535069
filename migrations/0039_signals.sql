CREATE TABLE `signal_backfills` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`signal_id` integer NOT NULL,
	`status` text DEFAULT 'queued' NOT NULL,
	`from_ms` integer NOT NULL,
	`to_ms` integer NOT NULL,
	`filters` text,
	`sample_rate` real NOT NULL,
	`max_logs` integer NOT NULL,
	`matched` integer DEFAULT 0 NOT NULL,
	`enqueued` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`cursor` text,
	`paged_at` integer,
	`error` text,
	`redrives` integer DEFAULT 0 NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE INDEX `signal_backfills_signal` ON `signal_backfills` (`signal_id`,`id`);--> statement-breakpoint
CREATE INDEX `signal_backfills_open` ON `signal_backfills` (`updated_at`) WHERE status IN ('queued', 'running');--> statement-breakpoint
CREATE TABLE `signal_hooks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`signal_id` integer NOT NULL,
	`workspace_id` integer NOT NULL,
	`scope` text NOT NULL,
	`prompt_template_id` integer,
	`prompt_version_number` integer,
	`release_label` text,
	`ab_variant` text,
	`sample_rate` real NOT NULL,
	`filters` text,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `signal_hooks_signal` ON `signal_hooks` (`signal_id`);--> statement-breakpoint
CREATE TABLE `signal_spend` (
	`signal_id` integer NOT NULL,
	`day` integer NOT NULL,
	`runs` integer DEFAULT 0 NOT NULL,
	`cost` real DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`last_granted` integer DEFAULT 0 NOT NULL,
	PRIMARY KEY(`signal_id`, `day`)
) WITHOUT ROWID;
-- "WITHOUT ROWID" is hand-written (drizzle-kit cannot express it): one row written per key, stored in key order.
--> statement-breakpoint
CREATE TABLE `signals` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`name` text NOT NULL,
	`statement` text NOT NULL,
	`color` text,
	`enabled` integer DEFAULT false NOT NULL,
	`model` text,
	`include` text NOT NULL,
	`delay_seconds` integer DEFAULT 0 NOT NULL,
	`daily_runs` integer,
	`daily_cost_usd` real,
	`revision` integer DEFAULT 1 NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `signals_workspace_name` ON `signals` (`workspace_id`,`name`);--> statement-breakpoint
CREATE INDEX `signals_enabled` ON `signals` (`workspace_id`) WHERE enabled = 1;--> statement-breakpoint
CREATE TABLE `signal_daily` (
	`signal_id` integer NOT NULL,
	`day` integer NOT NULL,
	`workspace_id` integer NOT NULL,
	`true_count` integer DEFAULT 0 NOT NULL,
	`false_count` integer DEFAULT 0 NOT NULL,
	`error_count` integer DEFAULT 0 NOT NULL,
	`cost` real DEFAULT 0 NOT NULL,
	PRIMARY KEY(`signal_id`, `day`)
) WITHOUT ROWID;
-- "WITHOUT ROWID" is hand-written (drizzle-kit cannot express it): one row written per key, stored in key order.
--> statement-breakpoint
CREATE TABLE `signal_pending` (
	`request_id` integer NOT NULL,
	`signal_id` integer NOT NULL,
	`workspace_id` integer NOT NULL,
	`hook_id` integer,
	`backfill_id` integer,
	`not_before` integer NOT NULL,
	`lease_until` integer,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	PRIMARY KEY(`request_id`, `signal_id`)
) WITHOUT ROWID;
-- "WITHOUT ROWID" is hand-written (drizzle-kit cannot express it): one row written per key, stored in key order.
--> statement-breakpoint
CREATE INDEX `signal_pending_backfill` ON `signal_pending` (`backfill_id`) WHERE backfill_id IS NOT NULL;--> statement-breakpoint
CREATE TABLE `signal_results` (
	`request_id` integer NOT NULL,
	`signal_id` integer NOT NULL,
	`workspace_id` integer NOT NULL,
	`signal_name` text NOT NULL,
	`hook_id` integer,
	`backfill_id` integer,
	`revision` integer NOT NULL,
	`result` integer,
	`reasoning` text,
	`quote` text,
	`quote_verified` integer DEFAULT false NOT NULL,
	`status` text NOT NULL,
	`error` text,
	`model` text,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cost` real DEFAULT 0 NOT NULL,
	`day` integer NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	PRIMARY KEY(`request_id`, `signal_id`)
) WITHOUT ROWID;
-- "WITHOUT ROWID" is hand-written (drizzle-kit cannot express it): one row written per key, stored in key order.
--> statement-breakpoint
CREATE INDEX `signal_results_search` ON `signal_results` (`workspace_id`,`signal_name`,`result`,`request_id`);--> statement-breakpoint
CREATE INDEX `signal_results_backfill` ON `signal_results` (`backfill_id`) WHERE backfill_id IS NOT NULL;