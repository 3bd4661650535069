// The workspace domain: API keys (the auth middleware, http/middleware.ts, resolves them here), the
// workspace's settings and its encrypted env vars. Route folders: workspace, env-vars.
// Rule: the lowest domain: it imports no other domain; other domains and http/ come in through this face.
export { AuthCache, authenticateHash, hashKey, plausibleKey, UnknownKeyCache } from "./auth";
export { createEnvVar, deleteEnvVar, envForRun, listEnvVars, updateEnvVar, type EnvScope } from "./env-vars";
export { getLogRetention, setLogRetention } from "./log-retention";
export { assertRoomForJob, JOB_CAPS, JOB_RETRY_AFTER_SECONDS, jobCapError, roomForJobSql, type CappedJob } from "./job-caps";
