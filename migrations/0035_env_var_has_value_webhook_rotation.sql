ALTER TABLE `env_vars` ADD `has_value` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `previous_secret` text;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `previous_secret_until` integer;--> statement-breakpoint
-- A variable has a value when it showed a suffix (placeholders had none): set before value_suffix,
-- which held the value's last characters in plain text, is dropped by the next migration. Nothing of
-- a value is lost: the sealed value is whole, and lists now read the suffix from it.
UPDATE `env_vars` SET `has_value` = (`value_suffix` IS NOT NULL);
