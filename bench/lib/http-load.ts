/**
 * A small closed-loop load generator for benchmarks: `concurrency` clients each send a request,
 * wait for the answer, and send the next, for a fixed time. Bounded in time and count, aimed at
 * 127.0.0.1 only.
 */
export interface LoadResult {
  label: string;
  requests: number;
  errors: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export async function runLoad(
  label: string,
  options: { seconds: number; concurrency: number; maxRequests?: number },
  send: (i: number) => Promise<boolean>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const deadline = performance.now() + options.seconds * 1000;
  const started = performance.now();
  const worker = async () => {
    while (performance.now() < deadline && next < (options.maxRequests ?? Infinity)) {
      const i = next++;
      const t0 = performance.now();
      const ok = await send(i).catch(() => false);
      latencies.push(performance.now() - t0);
      if (!ok) errors++;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return { label, requests: latencies.length, errors, seconds, perSecond: latencies.length / seconds, p50Ms: pct(0.5), p99Ms: pct(0.99) };
}

export function printLoad(r: LoadResult): void {
  console.log(
    `${r.label.padEnd(28)} ${r.perSecond.toFixed(0).padStart(7)} req/s  p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms  (${r.requests} requests, ${r.errors} errors, ${r.seconds.toFixed(1)} s)`,
  );
}

/** POSTs a JSON-RPC SendMessage with the given parts; true when the task ended in `expectState`. */
export function jsonRpcSender(url: string, token: string | undefined, expectState: string) {
  return async (parts: unknown[]): Promise<boolean> => {
    const res = await fetch(`${url}/a2a/jsonrpc`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'A2A-Version': '1.0',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts } },
      }),
    });
    const body = (await res.json()) as { result?: { task?: { status?: { state?: string } } } };
    return body.result?.task?.status?.state === expectState;
  };
}
