/**
 * A loader for a chunk loaded on first use: the first call starts `load`, later calls share it,
 * and a failed load is started again by the next call (meanwhile callers show what they can).
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | null = null;
  return () =>
    (loading ??= load().catch((e: unknown) => {
      loading = null;
      throw e;
    }));
}
