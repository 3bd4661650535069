CREATE TABLE `log_id_range` (
	`id` integer PRIMARY KEY NOT NULL,
	`base` integer NOT NULL,
	`created_at` integer DEFAULT (cast(unixepoch('subsec') * 1000 as integer)) NOT NULL
);
