CREATE TABLE `request_groups` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
ALTER TABLE `request_logs` ADD `scores` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `request_logs` ADD `group_id` integer;--> statement-breakpoint
CREATE INDEX `request_logs_workspace_group` ON `request_logs` (`workspace_id`,`group_id`);--> statement-breakpoint
-- Hand-written: logs stored before named scores keep their one score (under its name, or "default").
UPDATE `request_logs` SET `scores` = json_object(coalesce(`score_name`, 'default'), `score`) WHERE `score_name` IS NOT NULL OR `score` <> 0;
