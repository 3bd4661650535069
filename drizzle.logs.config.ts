// The log databases' schema (request logs, their side tables, spans, idempotency keys): drizzle-kit writes
// migrations-logs/, which wrangler applies to every binding in LOG_SHARDS (src/logs/shards.ts).
// drizzle.config.ts covers the control database.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: ["./src/db/schema/requests.ts", "./src/db/schema/traces.ts", "./src/db/schema/idempotency.ts", "./src/db/schema/ab-rollups.ts", "./src/db/schema/signal-results.ts"],
  out: "./migrations-logs",
});
