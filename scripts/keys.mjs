#!/usr/bin/env node
// npm run keys -- create --workspace <name> [--email <e-mail>] [--remote]
// npm run keys -- list [--workspace <name>] [--remote]
// npm run keys -- revoke <prefix|key> [--remote]
// Works on the local D1 (the one `npm run dev` serves) or, with --remote, on the deployed one.
// `create` prints the new key alone on the last line of stdout.
import { parseArgs } from "node:util";
import { createKey, listKeys, revokeKey } from "./lib/keys.mjs";
import { applyMigrations } from "./lib/wrangler.mjs";

const USAGE = `usage:
  npm run keys -- create --workspace <name> [--email <e-mail>] [--remote] [--persist-to <dir>]
  npm run keys -- list [--workspace <name>] [--remote] [--persist-to <dir>]
  npm run keys -- revoke <prefix|key> [--remote] [--persist-to <dir>]`;

function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      workspace: { type: "string" },
      email: { type: "string" },
      remote: { type: "boolean", default: false },
      "persist-to": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [command, arg] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const target = { remote: values.remote, persistTo: values["persist-to"] };
  // Locally the CLI makes sure the schema exists; remotely that is the deploy step's job.
  if (!values.remote) applyMigrations(target);

  switch (command) {
    case "create": {
      if (!values.workspace) throw new Error("create needs --workspace <name>");
      const key = createKey({ workspace: values.workspace, email: values.email, ...target });
      console.error(`Created a key for workspace "${values.workspace}"${values.remote ? " (remote)" : ""}. It is shown once:`);
      console.log(key);
      return 0;
    }
    case "list": {
      const rows = listKeys({ workspace: values.workspace, ...target });
      if (rows.length === 0) console.log("no keys");
      for (const r of rows) {
        const state = r.revoked_at ? `revoked ${new Date(r.revoked_at).toISOString()}` : "active";
        console.log(`${r.prefix}…  ${r.workspace}  ${r.email}  created ${new Date(r.created_at).toISOString()}  ${state}`);
      }
      return 0;
    }
    case "revoke": {
      if (!arg) throw new Error("revoke needs the key's prefix or the whole key");
      revokeKey(arg, target);
      console.log(`revoked ${arg.slice(0, 11)}…`);
      return 0;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

try {
  process.exitCode = main();
} catch (err) {
  console.error(`keys: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
