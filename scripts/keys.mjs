#!/usr/bin/env node
// npm run keys -- create --workspace <name> [--email <e-mail>] [--scopes <a,b>] [--name <label>] [--remote]
// npm run keys -- list [--workspace <name>] [--remote]
// npm run keys -- revoke <prefix|key> [--remote]
// Works on the local D1 (the one `npm run dev` serves) or, with --remote, on the deployed one.
// `create` prints the new key alone on the last line of stdout.
import { parseArgs } from "node:util";
import { creating, listing, revoking, run, runOn, SCOPES } from "./lib/keys.mjs";
import { openLocalD1 } from "./lib/wrangler.mjs";

const USAGE = `usage:
  npm run keys -- create --workspace <name> [--email <e-mail>] [--scopes <a,b>] [--name <label>] [--remote] [--persist-to <dir>]
  npm run keys -- list [--workspace <name>] [--remote] [--persist-to <dir>]
  npm run keys -- revoke <prefix|key> [--remote] [--persist-to <dir>]

A key is admin (everything) unless --scopes names less: ${SCOPES.join(", ")}.
<area>:write includes <area>:read; read is every read. Keys made and revoked here are in the audit log.`;

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      workspace: { type: "string" },
      email: { type: "string" },
      scopes: { type: "string" },
      name: { type: "string" },
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

  // The operation is built, and its arguments checked, before any database is opened: a mistake is
  // refused at once.
  let op, report;
  switch (command) {
    case "create":
      if (!values.workspace) throw new Error("create needs --workspace <name>");
      op = creating({ workspace: values.workspace, email: values.email, scopes: values.scopes, name: values.name });
      report = (key) => {
        console.error(`Created a key for workspace "${values.workspace}" with scopes ${values.scopes ?? "admin"}${values.remote ? " (remote)" : ""}. It is shown once:`);
        console.log(key);
      };
      break;
    case "list":
      op = listing({ workspace: values.workspace });
      report = (rows) => {
        if (rows.length === 0) console.log("no keys");
        for (const r of rows) {
          const state = r.revoked_at ? `revoked ${new Date(r.revoked_at).toISOString()}` : "active";
          console.log(`${r.prefix}…  ${r.workspace}  ${r.email}  ${r.name ? `"${r.name}"  ` : ""}${JSON.parse(r.scopes ?? '["admin"]').join(",")}  created ${new Date(r.created_at).toISOString()}  ${state}`);
        }
      };
      break;
    case "revoke":
      if (!arg) throw new Error("revoke needs the key's prefix or the whole key");
      op = revoking(arg);
      report = () => console.log(`revoked ${arg.slice(0, 11)}…`);
      break;
    default:
      console.error(USAGE);
      return 2;
  }

  if (values.remote) {
    report(run(op, { remote: true }));
    return 0;
  }
  // Locally the CLI makes sure the schema exists (openLocalD1 applies pending migrations); remotely
  // that is the deploy step's job.
  const local = await openLocalD1({ persistTo: values["persist-to"] });
  try {
    report(await runOn(local.env.DB, op));
  } finally {
    await local.dispose();
  }
  return 0;
}

try {
  process.exitCode = await main();
} catch (err) {
  console.error(`keys: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
