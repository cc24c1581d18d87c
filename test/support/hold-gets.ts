/** Holding an operation in flight, for tests of streams, limits and shutdown. */

/**
 * Makes the store's `get` wait until `release()`: a `get` operation (and a stream carrying one)
 * then stays in flight as long as a test needs. `restore()` releases and puts `get` back.
 */
export function holdGets(store: { get: (...args: never[]) => Promise<unknown> }): { release(): void; restore(): void } {
  const original = store.get;
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  store.get = async (...args: never[]) => {
    await gate;
    return original.apply(store, args);
  };
  return {
    release,
    restore: () => {
      release();
      store.get = original;
    },
  };
}
