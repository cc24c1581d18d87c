/** Reading a registry's /metrics and waiting for a condition, for tests. */

/** The sum of a metric's samples whose label text contains `labels`. */
export async function metricValue(baseUrl: string, name: string, labels: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(labels))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/** Polls until `check` holds; throws after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
