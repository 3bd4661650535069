CREATE TABLE `report_columns` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`report_id` integer NOT NULL,
	`column_type` text NOT NULL,
	`name` text NOT NULL,
	`position` integer NOT NULL,
	`configuration` text NOT NULL,
	`is_part_of_score` integer DEFAULT false NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `report_columns_report_name` ON `report_columns` (`report_id`,`name`);--> statement-breakpoint
CREATE INDEX `report_columns_report_position` ON `report_columns` (`report_id`,`position`);--> statement-breakpoint
CREATE TABLE `report_rows` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`report_id` integer NOT NULL,
	`row_index` integer NOT NULL,
	`dataset_row_id` integer NOT NULL,
	`state` text DEFAULT 'QUEUED' NOT NULL,
	`cells` text,
	`completed_count` integer DEFAULT 0 NOT NULL,
	`failed_count` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `report_rows_report_row` ON `report_rows` (`report_id`,`row_index`);--> statement-breakpoint
CREATE INDEX `report_rows_report_state` ON `report_rows` (`report_id`,`state`,`row_index`);--> statement-breakpoint
CREATE TABLE `reports` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`name` text NOT NULL,
	`comment` text,
	`tags` text DEFAULT '[]' NOT NULL,
	`folder_id` integer,
	`is_blueprint` integer NOT NULL,
	`parent_report_id` integer,
	`dataset_group_id` integer NOT NULL,
	`dataset_id` integer NOT NULL,
	`status` text,
	`row_count` integer,
	`score` text,
	`deleted` integer DEFAULT false NOT NULL,
	`user_id` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `reports_workspace_blueprint` ON `reports` (`workspace_id`,`is_blueprint`,`id`);--> statement-breakpoint
CREATE INDEX `reports_parent` ON `reports` (`parent_report_id`);--> statement-breakpoint
CREATE INDEX `reports_workspace_folder` ON `reports` (`workspace_id`,`folder_id`);