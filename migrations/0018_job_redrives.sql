ALTER TABLE `dataset_jobs` ADD `redrives` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `dataset_jobs_open` ON `dataset_jobs` (`updated_at`) WHERE status IN ('QUEUED', 'RUNNING');--> statement-breakpoint
ALTER TABLE `reports` ADD `redrives` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `reports_running` ON `reports` (`updated_at`) WHERE status = 'RUNNING' AND is_blueprint = 0;--> statement-breakpoint
ALTER TABLE `sheet_operations` ADD `redrives` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `sheet_operations_open` ON `sheet_operations` (`updated_at`) WHERE status IN ('pending', 'running');--> statement-breakpoint
ALTER TABLE `workflow_executions` ADD `heartbeat_at` integer;--> statement-breakpoint
ALTER TABLE `workflow_executions` ADD `redrives` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `workflow_executions_open` ON `workflow_executions` (`heartbeat_at`,`created_at`) WHERE status IN ('QUEUED', 'RUNNING');