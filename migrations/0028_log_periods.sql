ALTER TABLE `log_shards` ADD `full` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `workspaces` ADD `log_periods` text;--> statement-breakpoint
-- Hand-written: a placed workspace has had one period, on the database it is on.
UPDATE `workspaces` SET `log_periods` = json_array(`log_shard`) WHERE `log_shard` IS NOT NULL;
