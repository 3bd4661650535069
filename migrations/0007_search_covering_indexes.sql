DROP INDEX `request_log_values_lookup`;--> statement-breakpoint
CREATE INDEX `request_log_values_probe` ON `request_log_values` (`workspace_id`,`kind`,`key`,`value`,`request_id`);--> statement-breakpoint
DROP INDEX `request_logs_workspace_start`;--> statement-breakpoint
DROP INDEX `request_logs_workspace_price`;--> statement-breakpoint
CREATE INDEX `request_logs_workspace_scan` ON `request_logs` (`workspace_id`,`request_start_time`,`request_end_time`,`model`,`provider`,`status`,`price`,`input_tokens`,`output_tokens`,`prompt_id`,`prompt_version_number`,`output_format`);--> statement-breakpoint
CREATE INDEX `request_logs_workspace_price_start` ON `request_logs` (`workspace_id`,`price`,`request_start_time`);