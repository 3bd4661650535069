CREATE TABLE `ab_test_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`ab_test_id` integer NOT NULL,
	`revision` integer NOT NULL,
	`action` text NOT NULL,
	`actor` text NOT NULL,
	`user_id` integer,
	`details` text NOT NULL,
	`decision_key` text,
	`token` text,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ab_test_events_decision` ON `ab_test_events` (`ab_test_id`,`decision_key`);--> statement-breakpoint
CREATE INDEX `ab_test_events_test` ON `ab_test_events` (`workspace_id`,`ab_test_id`,`id`);--> statement-breakpoint
CREATE TABLE `ab_tests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`prompt_id` integer NOT NULL,
	`release_label` text NOT NULL,
	`name` text NOT NULL,
	`folder_id` integer,
	`status` text DEFAULT 'running' NOT NULL,
	`assignment_key` text,
	`salt` text DEFAULT '' NOT NULL,
	`revision` integer DEFAULT 1 NOT NULL,
	`split` text NOT NULL,
	`guardrails` text,
	`outcome` text,
	`promoted_variant` text,
	`pending_change_id` integer,
	`checked_at` integer,
	`ramped_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`ended_at` integer,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`prompt_id`) REFERENCES `prompt_templates`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ab_tests_active_label` ON `ab_tests` (`workspace_id`,`prompt_id`,`release_label`) WHERE "ab_tests"."status" <> 'completed' AND "ab_tests"."deleted_at" IS NULL;--> statement-breakpoint
CREATE INDEX `ab_tests_workspace_prompt` ON `ab_tests` (`workspace_id`,`prompt_id`);--> statement-breakpoint
CREATE INDEX `ab_tests_workspace_folder` ON `ab_tests` (`workspace_id`,`folder_id`);--> statement-breakpoint
CREATE INDEX `ab_tests_running` ON `ab_tests` (`status`,`checked_at`);--> statement-breakpoint
CREATE TABLE `label_change_requests` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`prompt_id` integer NOT NULL,
	`label_id` integer NOT NULL,
	`label_name` text NOT NULL,
	`from_version_id` integer NOT NULL,
	`to_version_id` integer NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`ab_test_id` integer,
	`requested_by` integer,
	`decided_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`decided_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`prompt_id`) REFERENCES `prompt_templates`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`label_id`) REFERENCES `prompt_labels`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`from_version_id`) REFERENCES `prompt_versions`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`to_version_id`) REFERENCES `prompt_versions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `label_change_requests_pending` ON `label_change_requests` (`label_id`) WHERE "label_change_requests"."status" = 'pending';--> statement-breakpoint
CREATE INDEX `label_change_requests_workspace` ON `label_change_requests` (`workspace_id`,`status`,`id`);--> statement-breakpoint
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
ALTER TABLE `prompt_labels` ADD `protected` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- Hand-written: a log served through an A/B release (ab_test_id set when it is written) waits for
-- the rollup step (src/logs/ab-rollups.ts), which deletes this row in the batch that counts the log.
CREATE TRIGGER `request_logs_ab_pending` AFTER INSERT ON `request_logs` WHEN NEW.ab_test_id IS NOT NULL BEGIN
  INSERT OR IGNORE INTO ab_rollup_pending (request_id) VALUES (NEW.id);
END;
