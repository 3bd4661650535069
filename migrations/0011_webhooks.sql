CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`webhook_id` integer NOT NULL,
	`event_id` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`lease_until` integer,
	`last_status_code` integer,
	`last_error` text,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_event_webhook` ON `webhook_deliveries` (`event_id`,`webhook_id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook` ON `webhook_deliveries` (`webhook_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_open` ON `webhook_deliveries` (`next_attempt_at`) WHERE status IN ('pending', 'sending', 'retrying');--> statement-breakpoint
CREATE TABLE `webhook_delivery_attempts` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`delivery_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`attempted_at` integer NOT NULL,
	`status_code` integer,
	`error` text,
	`duration_ms` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_delivery_attempts_number` ON `webhook_delivery_attempts` (`delivery_id`,`attempt`);--> statement-breakpoint
CREATE TABLE `webhook_events` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`user_id` integer,
	`event_type` text NOT NULL,
	`details` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`dispatched_at` integer
);
--> statement-breakpoint
CREATE INDEX `webhook_events_undispatched` ON `webhook_events` (`workspace_id`,`created_at`) WHERE dispatched_at IS NULL;--> statement-breakpoint
CREATE INDEX `webhook_events_created` ON `webhook_events` (`created_at`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`events` text,
	`secret` text NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhooks_workspace` ON `webhooks` (`workspace_id`,`deleted_at`);