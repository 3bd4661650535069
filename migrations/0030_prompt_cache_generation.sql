ALTER TABLE `prompt_templates` ADD `cache_generation` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- A template's cache_generation moves on with every change to what a read of it answers: the
-- template row (name, tags, folder, updated_at), its versions, its release labels and its external
-- IDs. The edge cache (src/prompts/cache.ts) keeps a version-pinned read as long as the generations it
-- was read at still hold. The WHEN keeps the trigger's own update from firing it again, whatever
-- recursive_triggers says.
CREATE TRIGGER `prompt_templates_generation` AFTER UPDATE ON `prompt_templates` WHEN NEW.cache_generation = OLD.cache_generation BEGIN
  UPDATE prompt_templates SET cache_generation = OLD.cache_generation + 1 WHERE id = NEW.id;
END;--> statement-breakpoint
CREATE TRIGGER `prompt_versions_generation_insert` AFTER INSERT ON `prompt_versions` BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1 WHERE id = NEW.prompt_id;
END;--> statement-breakpoint
CREATE TRIGGER `prompt_versions_generation_update` AFTER UPDATE ON `prompt_versions` BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1 WHERE id IN (OLD.prompt_id, NEW.prompt_id);
END;--> statement-breakpoint
CREATE TRIGGER `prompt_versions_generation_delete` AFTER DELETE ON `prompt_versions` BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1 WHERE id = OLD.prompt_id;
END;--> statement-breakpoint
CREATE TRIGGER `prompt_labels_generation_insert` AFTER INSERT ON `prompt_labels` BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1 WHERE id = NEW.prompt_id;
END;--> statement-breakpoint
CREATE TRIGGER `prompt_labels_generation_update` AFTER UPDATE ON `prompt_labels` BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1 WHERE id IN (OLD.prompt_id, NEW.prompt_id);
END;--> statement-breakpoint
CREATE TRIGGER `prompt_labels_generation_delete` AFTER DELETE ON `prompt_labels` BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1 WHERE id = OLD.prompt_id;
END;--> statement-breakpoint
CREATE TRIGGER `external_ids_prompt_generation_insert` AFTER INSERT ON `external_ids` WHEN NEW.entity_type = 'prompt_template' BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1 WHERE id = CAST(NEW.entity_id AS INTEGER) AND workspace_id = NEW.workspace_id;
END;--> statement-breakpoint
CREATE TRIGGER `external_ids_prompt_generation_update` AFTER UPDATE ON `external_ids` WHEN 'prompt_template' IN (OLD.entity_type, NEW.entity_type) BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1
  WHERE (id = CAST(OLD.entity_id AS INTEGER) AND workspace_id = OLD.workspace_id AND OLD.entity_type = 'prompt_template')
     OR (id = CAST(NEW.entity_id AS INTEGER) AND workspace_id = NEW.workspace_id AND NEW.entity_type = 'prompt_template');
END;--> statement-breakpoint
CREATE TRIGGER `external_ids_prompt_generation_delete` AFTER DELETE ON `external_ids` WHEN OLD.entity_type = 'prompt_template' BEGIN
  UPDATE prompt_templates SET cache_generation = cache_generation + 1 WHERE id = CAST(OLD.entity_id AS INTEGER) AND workspace_id = OLD.workspace_id;
END;
