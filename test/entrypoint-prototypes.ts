// A workaround for the test runtime of @cloudflare/vitest-pool-workers 0.15.1 (pinned with wrangler):
// the wrapper it puts around the Worker's entrypoint and Durable Object classes wraps the class's
// prototype in one more Proxy every time an instance is made, i.e. on every request through
// exports.default.fetch (call() in test/helpers/api.ts). After N requests each property read runs N
// nested traps: a runtime's thousandth request costs a thousand times its first, and a runtime shared
// by many test files (the workers project's isolate: false) slows to a crawl. Fixed upstream by
// installing the Proxy once ("Install wrapper prototype proxy once", workers-sdk PR 15106, for issue
// 15092); until the pinned version has it, this does the same from outside: the wrapper builds each
// instance with Reflect.construct(base, args, Wrapper) right after re-wrapping Wrapper.prototype, so
// for the runtime's base classes the first Proxy a wrapper installed is put back before the instance
// is built. What an instance reads through that Proxy is what it read before: the same traps on the
// same prototype, one layer deep instead of N.
import { DurableObject, WorkerEntrypoint, WorkflowEntrypoint } from "cloudflare:workers";

const PATCHED = Symbol.for("promptedge.test.entrypointPrototypes");
const holder = Reflect as unknown as Record<symbol, boolean>;

export function keepEntrypointPrototypesFlat(): void {
  if (holder[PATCHED]) return;
  holder[PATCHED] = true;
  const bases = new Set<unknown>([WorkerEntrypoint, DurableObject, WorkflowEntrypoint]);
  const firstPrototype = new WeakMap<Function, object>();
  const construct = Reflect.construct;
  Reflect.construct = function (target: Function, args: ArrayLike<unknown>, newTarget?: Function) {
    if (newTarget !== undefined && newTarget !== target && bases.has(target)) {
      const first = firstPrototype.get(newTarget);
      if (first === undefined) firstPrototype.set(newTarget, newTarget.prototype);
      else newTarget.prototype = first;
    }
    return newTarget === undefined ? construct(target, args) : construct(target, args, newTarget);
  } as typeof Reflect.construct;
}
