// The one node:async_hooks API the Worker uses (nodejs_compat provides it); @types/node is not in
// the Worker's types, which stay those of the Workers runtime.
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    run<R>(store: T, fn: () => R): R;
    getStore(): T | undefined;
  }
}
