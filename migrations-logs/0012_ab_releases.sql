CREATE TABLE `ab_rollup_pending` (
	`request_id` integer PRIMARY KEY NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE TABLE `ab_units` (
	`workspace_id` integer NOT NULL,
	`ab_test_id` integer NOT NULL,
	`variant` text NOT NULL,
	`unit` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `ab_test_id`, `variant`, `unit`)
);
--> statement-breakpoint
CREATE TABLE `ab_variant_daily` (
	`workspace_id` integer NOT NULL,
	`ab_test_id` integer NOT NULL,
	`variant` text NOT NULL,
	`day` integer NOT NULL,
	`bucket` integer NOT NULL,
	`requests` integer NOT NULL,
	`errors` integer NOT NULL,
	`cost` real NOT NULL,
	`latency_ms` integer NOT NULL,
	PRIMARY KEY(`workspace_id`, `ab_test_id`, `variant`, `day`, `bucket`)
);
--> statement-breakpoint
CREATE TABLE `ab_variant_metrics` (
	`workspace_id` integer NOT NULL,
	`ab_test_id` integer NOT NULL,
	`variant` text NOT NULL,
	`day` integer NOT NULL,
	`kind` text NOT NULL,
	`name` text NOT NULL,
	`n` integer NOT NULL,
	`sum` real NOT NULL,
	`sum_sq` real NOT NULL,
	PRIMARY KEY(`workspace_id`, `ab_test_id`, `variant`, `kind`, `name`, `day`)
);
--> statement-breakpoint
ALTER TABLE `request_logs` ADD `ab_test_id` integer;--> statement-breakpoint
ALTER TABLE `request_logs` ADD `ab_variant` text;--> statement-breakpoint
ALTER TABLE `request_logs` ADD `ab_assignment` text;--> statement-breakpoint
CREATE INDEX `request_logs_workspace_ab` ON `request_logs` (`workspace_id`,`ab_test_id`,`ab_variant`) WHERE "request_logs"."ab_test_id" IS NOT NULL;--> statement-breakpoint
-- Hand-written: a log served through an A/B release (ab_test_id set when it is written) waits for
-- the rollup step (src/logs/ab-rollups.ts), which deletes this row in the batch that counts the log.
CREATE TRIGGER `request_logs_ab_pending` AFTER INSERT ON `request_logs` WHEN NEW.ab_test_id IS NOT NULL BEGIN
  INSERT OR IGNORE INTO ab_rollup_pending (request_id) VALUES (NEW.id);
END;
