/**
 * `run`, with the calls made while one runs sharing its answer (and its failure): however many
 * ask at once, one run is in progress, and each caller gets the answer of the run in progress
 * when it asked, or of the one it started.
 */
export function sharedWhileRunning<T>(run: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () =>
    (running ??= run().finally(() => {
      running = undefined;
    }));
}
