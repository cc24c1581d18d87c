/**
 * A point where a test holds the code under test: the patched method awaits `hold()`, which
 * resolves `reached` and waits for `release()` (safe to call more than once, so a `finally` may
 * call it again).
 */
export interface HoldPoint {
  reached: Promise<void>;
  hold(): Promise<void>;
  release(): void;
}

export function holdPoint(): HoldPoint {
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return {
    reached,
    hold: () => {
      reach();
      return gate;
    },
    release,
  };
}
