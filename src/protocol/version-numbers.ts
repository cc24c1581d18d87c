/**
 * Version numbers as A2A writes them, with nothing of the server: protocol/legacy-card.ts reads
 * them for `a2a-registry verify` (and sign's checks), which loaded ./versions.ts for this one
 * function, and through it express and the HTTP error handlers (about 0.2 s of CPU a run).
 */

/** "1.0", "1.0.0", " 1.0.7 " → "1.0"; "1", "v1.0", "abc" → undefined. */
export function majorMinor(version: string): string | undefined {
  const m = /^(\d{1,4})\.(\d{1,4})(?:\.\d{1,6})?$/.exec(version.trim());
  return m ? `${Number(m[1])}.${Number(m[2])}` : undefined;
}
