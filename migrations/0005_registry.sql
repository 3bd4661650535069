CREATE TABLE `external_ids` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`entity_type` text NOT NULL,
	`entity_id` text NOT NULL,
	`source` text NOT NULL,
	`external_id` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `external_ids_mapping` ON `external_ids` (`workspace_id`,`entity_type`,`source`,`external_id`);--> statement-breakpoint
CREATE INDEX `external_ids_entity` ON `external_ids` (`workspace_id`,`entity_type`,`entity_id`);--> statement-breakpoint
CREATE TABLE `folders` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`parent_id` integer,
	`parent_key` integer GENERATED ALWAYS AS (coalesce(parent_id, 0)) VIRTUAL,
	`name` text NOT NULL,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `folders_sibling_name` ON `folders` (`workspace_id`,`parent_key`,`name`);--> statement-breakpoint
CREATE TABLE `prompt_labels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`prompt_id` integer NOT NULL,
	`prompt_version_id` integer NOT NULL,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`prompt_id`) REFERENCES `prompt_templates`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`prompt_version_id`) REFERENCES `prompt_versions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `prompt_labels_prompt_name` ON `prompt_labels` (`prompt_id`,`name`);--> statement-breakpoint
CREATE INDEX `prompt_labels_version` ON `prompt_labels` (`prompt_version_id`);--> statement-breakpoint
CREATE TABLE `tool_labels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`tool_id` integer NOT NULL,
	`tool_version_id` integer NOT NULL,
	`name` text NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tool_id`) REFERENCES `tool_registry`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tool_version_id`) REFERENCES `tool_versions`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tool_labels_tool_name` ON `tool_labels` (`tool_id`,`name`);--> statement-breakpoint
CREATE TABLE `tool_registry` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`folder_id` integer,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tool_registry_workspace_name` ON `tool_registry` (`workspace_id`,`name`);--> statement-breakpoint
CREATE INDEX `tool_registry_workspace_folder` ON `tool_registry` (`workspace_id`,`folder_id`);--> statement-breakpoint
CREATE TABLE `tool_versions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`tool_id` integer NOT NULL,
	`version` integer NOT NULL,
	`tool_definition` text NOT NULL,
	`execution` text,
	`commit_message` text,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`tool_id`) REFERENCES `tool_registry`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tool_versions_tool_version` ON `tool_versions` (`tool_id`,`version`);--> statement-breakpoint
ALTER TABLE `prompt_templates` ADD `tags` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `prompt_templates` ADD `created_by` integer;--> statement-breakpoint
CREATE INDEX `prompt_templates_workspace_folder` ON `prompt_templates` (`workspace_id`,`folder_id`);