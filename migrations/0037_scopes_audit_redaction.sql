CREATE TABLE `audit_events` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`action` text NOT NULL,
	`target_type` text NOT NULL,
	`target_id` text,
	`details` text DEFAULT '{}' NOT NULL,
	`api_key_id` integer,
	`user_id` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_events_workspace_created` ON `audit_events` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `audit_events_workspace_action` ON `audit_events` (`workspace_id`,`action`,`created_at`);--> statement-breakpoint
CREATE TABLE `redaction_policies` (
	`workspace_id` integer PRIMARY KEY NOT NULL,
	`policy` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_by_key_id` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `api_keys` ADD `name` text;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `scopes` text DEFAULT '["admin"]' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_keys` ADD `created_by_key_id` integer;--> statement-breakpoint
CREATE INDEX `api_keys_workspace` ON `api_keys` (`workspace_id`);--> statement-breakpoint
ALTER TABLE `request_logs` ADD `redactions` text;--> statement-breakpoint
CREATE INDEX `request_logs_workspace_redacted` ON `request_logs` (`workspace_id`,`request_start_time`) WHERE "request_logs"."redactions" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `spans` ADD `redactions` text;--> statement-breakpoint
ALTER TABLE `trace_log_records` ADD `redactions` text;
--> statement-breakpoint
-- The audit log is append-only: no statement may change or remove a row once written.
CREATE TRIGGER `audit_events_no_update` BEFORE UPDATE ON `audit_events`
BEGIN
	SELECT RAISE(ABORT, 'audit events are never changed');
END;--> statement-breakpoint
CREATE TRIGGER `audit_events_no_delete` BEFORE DELETE ON `audit_events`
BEGIN
	SELECT RAISE(ABORT, 'audit events are never deleted');
END;
