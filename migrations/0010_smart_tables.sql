CREATE TABLE `sheet_operations` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`id` text NOT NULL,
	`table_id` text NOT NULL,
	`sheet_id` text NOT NULL,
	`source` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`progress` integer DEFAULT 0 NOT NULL,
	`message` text DEFAULT '' NOT NULL,
	`rows_added` integer DEFAULT 0 NOT NULL,
	`row_count` integer DEFAULT 0 NOT NULL,
	`file_name` text,
	`format` text,
	`file_bytes` integer,
	`blob_key` text,
	`params` text,
	`error_message` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sheet_operations_workspace_id` ON `sheet_operations` (`workspace_id`,`id`);--> statement-breakpoint
CREATE TABLE `sheet_prompt_refs` (
	`id` integer PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`table_id` text NOT NULL,
	`sheet_id` text NOT NULL,
	`column_id` text NOT NULL,
	`prompt_id` integer,
	`prompt_version_id` integer,
	`prompt_label_id` integer
);
--> statement-breakpoint
CREATE INDEX `sheet_prompt_refs_column` ON `sheet_prompt_refs` (`sheet_id`,`column_id`);--> statement-breakpoint
CREATE INDEX `sheet_prompt_refs_prompt` ON `sheet_prompt_refs` (`workspace_id`,`prompt_id`);--> statement-breakpoint
CREATE INDEX `sheet_prompt_refs_version` ON `sheet_prompt_refs` (`workspace_id`,`prompt_version_id`);--> statement-breakpoint
CREATE INDEX `sheet_prompt_refs_label` ON `sheet_prompt_refs` (`workspace_id`,`prompt_label_id`);--> statement-breakpoint
CREATE TABLE `sheets` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`workspace_id` integer NOT NULL,
	`table_id` text NOT NULL,
	`title` text NOT NULL,
	`position` integer NOT NULL,
	`row_count` integer DEFAULT 0 NOT NULL,
	`version_count` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sheets_id_unique` ON `sheets` (`id`);--> statement-breakpoint
CREATE INDEX `sheets_table_position` ON `sheets` (`table_id`,`position`);--> statement-breakpoint
CREATE TABLE `smart_tables` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`workspace_id` integer NOT NULL,
	`title` text NOT NULL,
	`title_folded` text NOT NULL,
	`folder_id` integer,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`deleted_at` integer,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `smart_tables_id_unique` ON `smart_tables` (`id`);--> statement-breakpoint
CREATE INDEX `smart_tables_workspace_seq` ON `smart_tables` (`workspace_id`,`seq`);--> statement-breakpoint
CREATE INDEX `smart_tables_workspace_folder` ON `smart_tables` (`workspace_id`,`folder_id`,`seq`);