// drizzle-kit reads src/db/schema/ (the one source of truth, a file per domain) and writes SQL that wrangler applies.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema/index.ts",
  out: "./migrations",
});
