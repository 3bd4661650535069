// The arguments of npm run dev: its port, and what goes on to wrangler dev.

/**
 * The port: `--port N` (or `--port=N`) after `npm run dev --`, else PORT, else 8787. The flag is taken
 * out of what goes on to wrangler, which would otherwise see two ports. `--persist-to DIR` (or
 * `--persist-to=DIR`) is passed on to wrangler and also returned as `persistTo`: the migrations and the
 * printed key then go to that local state instead of the default one.
 */
export function portAndRest(argv, envPort) {
  let port = envPort || "8787";
  let persistTo;
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--port" || a === "-p") {
      port = argv[++i] ?? port;
    } else if (a.startsWith("--port=")) {
      port = a.slice("--port=".length);
    } else {
      if (a === "--persist-to" && argv[i + 1] !== undefined) persistTo = argv[i + 1];
      else if (a.startsWith("--persist-to=")) persistTo = a.slice("--persist-to=".length);
      rest.push(a);
    }
  }
  if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    throw new Error(`the port must be a number from 1 to 65535, not "${port}"`);
  }
  return persistTo === undefined ? { port, rest } : { port, rest, persistTo };
}
