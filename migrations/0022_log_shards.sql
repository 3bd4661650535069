-- Log databases (shards): request logs and spans of new workspaces live in the D1 databases listed
-- by LOG_SHARDS (migrations-logs/); the shard map is workspaces.log_shard plus this table.
CREATE TABLE `log_shards` (
	`binding` text PRIMARY KEY NOT NULL,
	`open` integer DEFAULT true NOT NULL,
	`size_bytes` integer DEFAULT 0 NOT NULL,
	`measured_at` integer DEFAULT 0 NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
ALTER TABLE `workspaces` ADD `log_shard` text;
--> statement-breakpoint
-- Workspaces that exist now keep their logs where they are: in this database ("DB"), so nothing moves.
UPDATE `workspaces` SET `log_shard` = 'DB';
-- The schema no longer declares request_logs.workspace_id and request_groups.workspace_id as foreign
-- keys (a log database has no workspaces table). Here the constraints stay: dropping them would mean
-- rebuilding request_logs, rewriting every log, for a constraint the existing rows already meet.
