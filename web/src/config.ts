/** The registry's description of itself, from the HTML the server wrote (src/web/page-config.ts). */
import type { PageConfig } from '../../src/web/page-config';

function read(): PageConfig {
  const fallback: PageConfig = { name: 'A2A Agent Registry', base: '', filters: ['kind', 'tags', 'protocolBinding', 'protocolVersion'], filterTypes: {}, filterMaxChars: {}, maxFilterValues: 20, hidesUnhealthy: false, readNeedsToken: false, maxIdChars: 100, maxRevisionsListed: 100, maxPageTokenChars: 512, maxQueryChars: 1000, maxDocumentBytes: 10240 };
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
