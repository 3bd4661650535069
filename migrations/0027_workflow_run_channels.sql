ALTER TABLE `workflow_executions` ADD `return_all_outputs` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `workflow_executions` ADD `channel_name_suffix` text;--> statement-breakpoint
CREATE INDEX `workflow_executions_channel` ON `workflow_executions` (`workflow_id`,`channel_name_suffix`) WHERE channel_name_suffix IS NOT NULL;