CREATE TABLE `skill_collection_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`collection_id` text NOT NULL,
	`number` integer NOT NULL,
	`root_path_at_version` text NOT NULL,
	`provider` text,
	`manifest` text NOT NULL,
	`commit_message` text,
	`release_label` text,
	`archived` integer DEFAULT false NOT NULL,
	`created_by` integer,
	`user_email` text,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`collection_id`) REFERENCES `skill_collections`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `skill_collection_versions_number` ON `skill_collection_versions` (`collection_id`,`number`);--> statement-breakpoint
CREATE UNIQUE INDEX `skill_collection_versions_label` ON `skill_collection_versions` (`collection_id`,`release_label`);--> statement-breakpoint
CREATE TABLE `skill_collections` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`folder_id` integer,
	`name` text NOT NULL,
	`root_path` text NOT NULL,
	`provider` text,
	`is_deleted` integer DEFAULT false NOT NULL,
	`latest_version` integer DEFAULT 0 NOT NULL,
	`created_by` integer,
	`updated_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `skill_collections_workspace_name` ON `skill_collections` (`workspace_id`,`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `skill_collections_workspace_root_path` ON `skill_collections` (`workspace_id`,`root_path`);