// Run as `node startup-probe.mjs <bundle.mjs>` by bench:bundle: evaluates the Worker's bundle as a
// module in this fresh process and prints the CPU time (user + system, process.cpuUsage) that took,
// as JSON. Evaluating the module (parsing it, running every top-level statement) is what a Worker's
// start-up is; Node's V8 does it as workerd's does. CPU time rather than wall time, so a busy machine
// moves the figure less. The runtime's own modules (cloudflare:workers: the Durable Object base
// class) are stood in for by empty classes.
import { register } from "node:module";

const hooks = `export async function resolve(specifier, context, next) {
  if (specifier.startsWith("cloudflare:")) {
    return { url: "data:text/javascript,export class DurableObject {} export class WorkerEntrypoint {} export const env = {};", shortCircuit: true };
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);

const before = process.cpuUsage();
await import(process.argv[2]);
const cpu = process.cpuUsage(before);
console.log(JSON.stringify({ cpu_ms: (cpu.user + cpu.system) / 1000 }));
