CREATE TABLE `env_vars` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`workspace_id` integer NOT NULL,
	`tool_id` integer,
	`scope_key` integer GENERATED ALWAYS AS (coalesce(tool_id, 0)) VIRTUAL,
	`key` text NOT NULL,
	`sealed_value` text NOT NULL,
	`value_suffix` text,
	`created_by` integer,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	`updated_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL,
	FOREIGN KEY (`workspace_id`) REFERENCES `workspaces`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `env_vars_scope_key` ON `env_vars` (`workspace_id`,`scope_key`,`key`);