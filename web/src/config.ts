/**
 * What the server tells the page about this registry, in `<meta name="registry-config">` (see
 * src/web/page-shell.ts): no inline script is needed, and the page adapts to the registry it is
 * served by (its name, the path it is mounted under, the search filters it accepts).
 */
export interface PageConfig {
  /** The registry's name, from its agent card. */
  name: string;
  /** Path prefix of every URL (from PUBLIC_URL), "" at the root. */
  base: string;
  /** Keys of the search filter this registry accepts (verified, health, ... appear when supported). */
  filters: string[];
  /** Reads need a token (REGISTRY_PUBLIC_READ=false). */
  readNeedsToken: boolean;
  maxDocumentBytes: number;
}

function read(): PageConfig {
  const fallback: PageConfig = { name: 'A2A Agent Registry', base: '', filters: ['kind', 'tags', 'protocolBinding', 'protocolVersion'], readNeedsToken: false, maxDocumentBytes: 10240 };
  const meta = document.querySelector<HTMLMetaElement>('meta[name="registry-config"]');
  if (!meta) return fallback;
  try {
    return { ...fallback, ...(JSON.parse(meta.content) as Partial<PageConfig>) };
  } catch {
    return fallback;
  }
}

export const config: PageConfig = read();

/** An absolute path on this registry, with its base. */
export const href = (path: string): string => `${config.base}${path}`;
