CREATE TABLE `log_id_range` (
	`id` integer PRIMARY KEY NOT NULL,
	`base` integer NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
--> statement-breakpoint
ALTER TABLE `log_shards` ADD `full` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `log_shards` ADD `id_range` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `log_shards_id_range` ON `log_shards` (`id_range`);--> statement-breakpoint
ALTER TABLE `workspaces` ADD `log_periods` text;--> statement-breakpoint
-- Hand-written: the databases the shard map already knows get their ranges in the order they were
-- first seen (rowid), starting at 1. Range 0 stays for ids given before ranges existed, which no
-- database gets again; the control database ("DB") is given its range when it is first used.
UPDATE `log_shards` SET `id_range` = (SELECT count(*) FROM `log_shards` AS `o` WHERE `o`.rowid <= `log_shards`.rowid);--> statement-breakpoint
-- Hand-written: a placed workspace has had one period, on the database it is on.
UPDATE `workspaces` SET `log_periods` = json_array(`log_shard`) WHERE `log_shard` IS NOT NULL;
