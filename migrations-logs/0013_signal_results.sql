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