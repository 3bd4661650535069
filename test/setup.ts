// Applies the D1 migrations (the same files wrangler applies) before the tests of each file: the
// control database's, and the log databases' to each shard (once per runtime: applied migrations are
// skipped). And keeps the test runtime's entrypoint wrappers from slowing down with every request
// (test/entrypoint-prototypes.ts).
import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { keepEntrypointPrototypesFlat } from "./entrypoint-prototypes";

keepEntrypointPrototypesFlat();
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
await applyD1Migrations(env.LOGS_0, env.TEST_LOG_MIGRATIONS);
await applyD1Migrations(env.LOGS_1, env.TEST_LOG_MIGRATIONS);
