// Small helpers over lists and maps that several modules share.

/** The items of `list` by `key`, each group in list order (groups in the order their first item comes). */
export function groupBy<T, K>(list: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of list) {
    const k = key(item);
    const group = out.get(k);
    if (group) group.push(item);
    else out.set(k, [item]);
  }
  return out;
}

/**
 * Promises by key: the first call for a key starts the work, later calls share its promise; a failed
 * one is forgotten, so the next call tries again.
 */
export function promisesByKey<K, V>(): (key: K, start: () => Promise<V>) => Promise<V> {
  const started = new Map<K, Promise<V>>();
  return (key, start) => {
    let promise = started.get(key);
    if (!promise) {
      promise = start();
      started.set(key, promise);
      promise.catch(() => started.delete(key));
    }
    return promise;
  };
}
