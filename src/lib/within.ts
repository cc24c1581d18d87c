/**
 * What `promise` settles to if it settles within `ms`, else undefined (its rejection within the
 * time rejects this too). The timer is cleared either way, so a prompt answer leaves nothing
 * pending: the health check's ping and a scrape's entry counts, each bounded so a busy pool
 * cannot hold its caller.
 */
export async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
