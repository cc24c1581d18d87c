/**
 * The document being checked on the validate page, kept in sessionStorage: a visit to the
 * entry just registered, the search, or a reload, and Back finds it as it was left, not empty.
 * Like the token, it stays in this tab and goes nowhere else.
 */
const KEY = 'a2a-registry.validate-draft';

export interface Draft {
  text: string;
  /** The MCP server fields (name, url, description, version) for a bare toolspec. */
  meta: { name: string; url: string; description: string; version: string };
  /** The name of the file the text came from, while it is unchanged: messages name it after a reload too. */
  fileName?: string;
}

export function savedDraft(): Draft | undefined {
  try {
    const value: unknown = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    if (typeof value !== 'object' || value === null) return undefined;
    const { text, meta, fileName } = value as Partial<Draft>;
    if (typeof text !== 'string' || typeof meta !== 'object' || meta === null) return undefined;
    const field = (k: keyof Draft['meta']) => (typeof meta[k] === 'string' ? meta[k] : '');
    const draft: Draft = { text, meta: { name: field('name'), url: field('url'), description: field('description'), version: field('version') } };
    if (typeof fileName === 'string' && fileName !== '') draft.fileName = fileName;
    return draft;
  } catch {
    return undefined;
  }
}

export function saveDraft(draft: Draft): void {
  try {
    if (draft.text === '' && Object.values(draft.meta).every((v) => v === '')) sessionStorage.removeItem(KEY);
    else sessionStorage.setItem(KEY, JSON.stringify(draft));
  } catch {
    /* storage disabled or full (a huge paste): the draft lasts as long as the page */
  }
}
