-- A log is written under an API key that may have been cached by a Worker isolate: the database
-- itself refuses the insert once that key is revoked, so revocation is immediate for writes.
CREATE TRIGGER `request_logs_key_guard` BEFORE INSERT ON `request_logs`
WHEN NEW.`api_key_id` IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM `api_keys` WHERE `id` = NEW.`api_key_id` AND `revoked_at` IS NULL)
BEGIN
  SELECT RAISE(ABORT, 'api key revoked');
END;
