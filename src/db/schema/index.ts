// D1 tables: the one source of truth, one file per domain. drizzle-kit generates migrations/ from
// these files. Times are epoch milliseconds (integers); JSON columns are text parsed by drizzle.
export * from "./accounts";
export * from "./requests";
export * from "./registry";
export * from "./workflows";
export * from "./datasets";
export * from "./skills";
export * from "./tables";
export * from "./webhooks";
export * from "./evaluations";
export * from "./traces";
export * from "./idempotency";
export * from "./signals";
export * from "./signal-results";
export * from "./releases";
export * from "./ab-rollups";
