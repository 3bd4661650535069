ALTER TABLE `dataset_rows` ADD `log_prompt_id` integer;--> statement-breakpoint
ALTER TABLE `dataset_rows` ADD `log_prompt_version` integer;--> statement-breakpoint
-- Rows copied before: their logs are still in this database (log databases start empty).
UPDATE `dataset_rows` SET
  `log_prompt_id` = (SELECT r.`prompt_id` FROM `request_logs` AS r WHERE r.`id` = `dataset_rows`.`request_log_id` AND r.`workspace_id` = `dataset_rows`.`workspace_id`),
  `log_prompt_version` = (SELECT r.`prompt_version_number` FROM `request_logs` AS r WHERE r.`id` = `dataset_rows`.`request_log_id` AND r.`workspace_id` = `dataset_rows`.`workspace_id`)
WHERE `request_log_id` IS NOT NULL;
