CREATE TABLE `request_log_archives` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`day` integer NOT NULL,
	`object_key` text NOT NULL,
	`first_id` integer NOT NULL,
	`last_id` integer NOT NULL,
	`log_count` integer NOT NULL,
	`bytes` integer NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `request_log_archives_object_key` ON `request_log_archives` (`object_key`);--> statement-breakpoint
CREATE INDEX `request_log_archives_workspace_day` ON `request_log_archives` (`workspace_id`,`day`,`first_id`,`last_id`);--> statement-breakpoint
CREATE INDEX `request_log_archives_workspace_range` ON `request_log_archives` (`workspace_id`,`first_id`,`last_id`);