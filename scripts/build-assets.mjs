#!/usr/bin/env node
// npm run build:assets: everything the Worker serves as static files (public/): the API reference's
// Scalar bundle and the console. `--console` builds only the console (npm run build:console).
import { buildConsole, copyScalarBundle } from "./lib/assets.mjs";

const consoleOnly = process.argv.includes("--console");
if (!consoleOnly) console.log(`API reference bundle: ${copyScalarBundle()}`);
await buildConsole();
