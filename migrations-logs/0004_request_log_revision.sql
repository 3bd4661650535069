ALTER TABLE `request_logs` ADD `revision` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Every update of a log moves its revision on (the archive job's guard, src/logs/archive.ts). The WHEN
-- keeps the trigger's own update from firing it again, whatever recursive_triggers says.
CREATE TRIGGER `request_logs_revision` AFTER UPDATE ON `request_logs` WHEN NEW.revision = OLD.revision BEGIN
  UPDATE request_logs SET revision = OLD.revision + 1 WHERE id = NEW.id;
END;
