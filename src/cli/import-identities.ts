/**
 * The identities the documents of one import have taken, so that a later document with the same
 * identity is refused instead of stored: the two would be one entry, updated by each in turn, so
 * every run of the same import changed it twice (a revision each, every watch told) and never
 * came out "unchanged". Which document an import keeps must not depend on the run: the first.
 *
 * Two documents have the same identity where a registration of the second would find the entry
 * of the first: the same kind, and the first's identity URL is the second's or one of its other
 * spellings (EntryWrite.identityAliases, as the store looks it up). One key is kept per identity
 * taken, with where it was taken: memory grows with the identities, not with the documents' size.
 */
import type { EntryWrite } from '../storage/types.js';
import type { SourceDocument } from './import-sources.js';
import type { Refusal } from './import-preparation.js';

/** Where a document is: its file, and its line in a JSON-lines file. */
interface Place {
  file: string;
  line?: number;
}

export class ImportIdentities {
  readonly #taken = new Map<string, Place>();

  /**
   * Takes the identity `write` has for `doc`; or, when a document before it in this import took
   * it already, the refusal of `doc` naming that one. Called in input order.
   */
  take(doc: SourceDocument, write: Pick<EntryWrite, 'kind' | 'identityUrl' | 'identityAliases'>): Refusal | undefined {
    for (const url of [write.identityUrl, ...(write.identityAliases ?? [])]) {
      const earlier = this.#taken.get(keyOf(write.kind, url));
      if (earlier) return repeatedRefusal(doc, write, earlier);
    }
    this.#taken.set(keyOf(write.kind, write.identityUrl), doc.line === undefined ? { file: doc.file } : { file: doc.file, line: doc.line });
    return undefined;
  }
}

const keyOf = (kind: string, url: string): string => `${kind} ${url}`;

/** "bad.jsonl:10: the same agent (https://...) as line 1 of this import: one document per identity; remove one of them". */
function repeatedRefusal(doc: SourceDocument, write: Pick<EntryWrite, 'kind' | 'identityUrl'>, earlier: Place): Refusal {
  const here: Place = doc.line === undefined ? { file: doc.file } : { file: doc.file, line: doc.line };
  const where = (p: Place): string => (p.line === undefined ? p.file : `${p.file}:${p.line}`);
  const there = earlier.file === doc.file && earlier.line !== undefined ? `line ${earlier.line}` : where(earlier);
  const what = write.kind === 'agent' ? 'agent' : 'MCP server';
  return {
    ...here,
    code: 'DUPLICATE_IDENTITY',
    message: `${where(here)}: the same ${what} (${write.identityUrl}) as ${there} of this import: one document per identity; remove one of them.`,
    details: [
      {
        path: '',
        location: here,
        rule: 'duplicate-identity',
        message: `the ${what} ${write.identityUrl} was imported from ${where(earlier)}`,
        hint: `Keep one document for it (the one at ${where(earlier)} is the one imported): both would update the same entry, so every import of them would change it again.`,
      },
    ],
  };
}
