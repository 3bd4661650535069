// drizzle-kit reads src/db/schema.ts (the one source of truth) and writes SQL that wrangler applies.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  schema: "./src/db/schema.ts",
  out: "./migrations",
});
