ALTER TABLE `report_rows` ADD `claimed_at` integer;--> statement-breakpoint
ALTER TABLE `report_rows` ADD `claims` integer DEFAULT 0 NOT NULL;