#!/usr/bin/env node
// Writes console/src/api.gen.ts, the console's answer types, from the API's OpenAPI document
// (scripts/lib/api-types.mjs says how). `npm run typecheck` runs it before tsc.
import { writeApiTypes } from "./lib/api-types.mjs";

await writeApiTypes();
