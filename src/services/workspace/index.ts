// The workspace domain: API keys (the auth middleware, http/middleware.ts, resolves them here; made and
// revoked through api-keys), the workspace's settings, its encrypted env vars, its redaction policy and
// its audit log. Route folders: workspace, env-vars, api-keys, redaction-policy, audit-log.
// Rule: the lowest domain: it imports no other domain; other domains and http/ come in through this face.
export { AuthCache, authenticateHash, hashKey, plausibleKey, UnknownKeyCache } from "./auth";
export { createEnvVar, deleteEnvVar, envForRun, isProviderCredential, listEnvVars, updateEnvVar, type EnvScope } from "./env-vars";
export { getLogRetention, setLogRetention } from "./log-retention";
export { resourceConditions, resourceOrder, type ResourceColumns, type ResourceFilters, type ResourceListQuery } from "./resource-list";
export { apiKeyView, createApiKey, listApiKeys, revokeApiKey } from "./api-keys";
export { AUDIT_ACTIONS, auditStatement, listAuditEvents, recordAudit, type AuditAction, type AuditListQuery, type AuditSpec } from "./audit";
export { deleteRedactionPolicy, getRedactionPolicy, putRedactionPolicy, storedPolicy, type PolicyView } from "./redaction-policy";
export { assertRoomForJob, JOB_CAPS, JOB_RETRY_AFTER_SECONDS, jobCapError, roomForJobSql, type CappedJob } from "./job-caps";
