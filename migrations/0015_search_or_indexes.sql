DROP INDEX `request_logs_workspace_model`;--> statement-breakpoint
CREATE INDEX `request_logs_workspace_model_status` ON `request_logs` (`workspace_id`,`model`,`status`);--> statement-breakpoint
CREATE INDEX `request_logs_workspace_provider_latency` ON `request_logs` (`workspace_id`,`provider`,("request_end_time" - "request_start_time"));