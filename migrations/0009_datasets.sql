CREATE TABLE `dataset_groups` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`name` text NOT NULL,
	`folder_id` integer,
	`created_by` integer,
	`is_deleted` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dataset_groups_workspace_name` ON `dataset_groups` (`workspace_id`,`name`);--> statement-breakpoint
CREATE INDEX `dataset_groups_workspace_folder` ON `dataset_groups` (`workspace_id`,`folder_id`);--> statement-breakpoint
CREATE TABLE `dataset_jobs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`dataset_id` integer NOT NULL,
	`params` text NOT NULL,
	`status` text DEFAULT 'QUEUED' NOT NULL,
	`rows_added` integer,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `dataset_jobs_dataset` ON `dataset_jobs` (`dataset_id`);--> statement-breakpoint
CREATE TABLE `dataset_rows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`dataset_id` integer NOT NULL,
	`job_id` integer DEFAULT 0 NOT NULL,
	`position` integer NOT NULL,
	`request_log_id` integer,
	`values` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `dataset_rows_dataset_log` ON `dataset_rows` (`dataset_id`,`request_log_id`);--> statement-breakpoint
CREATE INDEX `dataset_rows_order` ON `dataset_rows` (`dataset_id`,`job_id`,`position`);--> statement-breakpoint
CREATE TABLE `datasets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`dataset_group_id` integer NOT NULL,
	`version_number` integer NOT NULL,
	`column_names` text NOT NULL,
	`filter_params` text,
	`current_job_id` integer,
	`is_deleted` integer DEFAULT false NOT NULL,
	`user_id` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `datasets_group_version` ON `datasets` (`dataset_group_id`,`version_number`);--> statement-breakpoint
CREATE INDEX `datasets_workspace` ON `datasets` (`workspace_id`,`id`);