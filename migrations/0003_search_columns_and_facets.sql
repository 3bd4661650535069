CREATE TABLE `request_log_facets` (
	`id` integer PRIMARY KEY NOT NULL,
	`workspace_id` integer NOT NULL,
	`field` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`value_fold` text NOT NULL,
	`count` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `request_log_facets_value` ON `request_log_facets` (`workspace_id`,`field`,`key`,`value`);--> statement-breakpoint
CREATE INDEX `request_log_facets_fold` ON `request_log_facets` (`workspace_id`,`field`,`key`,`value_fold`);--> statement-breakpoint
CREATE INDEX `request_log_facets_count` ON `request_log_facets` (`workspace_id`,`field`,`key`,`count`);--> statement-breakpoint
ALTER TABLE `request_logs` ADD `input_text` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `request_logs` ADD `output_text` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `request_logs` ADD `output_format` text DEFAULT 'empty' NOT NULL;--> statement-breakpoint
ALTER TABLE `request_logs` ADD `user_intent` text;--> statement-breakpoint
ALTER TABLE `request_logs` ADD `agent_intent` text;--> statement-breakpoint
CREATE INDEX `request_logs_workspace_model` ON `request_logs` (`workspace_id`,`model`);--> statement-breakpoint
CREATE INDEX `request_logs_workspace_price` ON `request_logs` (`workspace_id`,`price`);