// The per-mailbox arrival listeners both stores keep: a set per key, and a
// key dropped with its last listener so the map holds only mailboxes someone
// waits on (the Redis store reads that to skip arrivals nobody here wants).

/** Adds `listener` under `key`; the returned function removes it again. */
export function addKeyedListener<L>(registry: Map<string, Set<L>>, key: string, listener: L): () => void {
  let set = registry.get(key);
  if (!set) registry.set(key, (set = new Set()));
  set.add(listener);
  return () => {
    const current = registry.get(key);
    if (!current) return;
    current.delete(listener);
    if (current.size === 0) registry.delete(key);
  };
}
