/**
 * The identities the documents of one import have taken, so that a later document with the same
 * identity is refused instead of stored: the two would be one entry, updated by each in turn, so
 * every run of the same import changed it twice (a revision each, every watch told) and never
 * came out "unchanged". Which document an import keeps must not depend on the run: the first
 * that is stored.
 *
 * Two documents have the same identity where a registration of the second would find the entry
 * of the first: the same kind, and the first's identity URL is the second's or one of its other
 * spellings (EntryWrite.identityAliases, as the store looks it up).
 *
 * Only a document that was stored (created, updated or unchanged) makes a later one a repeat. One
 * refused when it was stored (another principal owns the identity, or one of its URLs) took
 * nothing: a later document with its identity is judged on its own, as it would be without the
 * first; it was refused as a repeat of "the one imported", which was not. So a document whose
 * identity an earlier one of the import claimed, not yet stored or refused, waits for it (`later`).
 *
 * One value is kept per identity once its documents are settled, where its stored document is (none
 * for an identity none was stored under): memory grows with the identities, not with the
 * documents' size.
 */
import type { EntryWrite } from '../storage/types.js';
import type { SourceDocument } from './import-sources.js';
import type { Refusal } from './import-preparation.js';

/** Where a document is: its file, and its line in a JSON-lines file. */
interface Place {
  file: string;
  line?: number;
}

/** A document's claim to its identity. */
export interface IdentityClaim {
  /** A document before it in this import was stored with the identity: this one's refusal, naming it. */
  readonly refusal?: Refusal;
  /**
   * Documents before it with the identity are not stored or refused yet: resolves once they are,
   * with the refusal naming the one stored, or undefined when none was (this one is then judged
   * on its own). Absent when it need wait for nothing.
   */
  readonly later?: Promise<Refusal | undefined>;
  /** What came of the document: stored (created, updated or unchanged) or not. Documents after it with its identity wait for this; a second call changes nothing. */
  settle(stored: boolean): void;
}

const NOTHING_TO_SETTLE = (): void => undefined;

export class ImportIdentities {
  /**
   * By identity key (kind and identity URL): where its stored document is, or, while documents
   * with it are not settled, that place once they are (undefined: none was stored).
   */
  readonly #holders = new Map<string, Place | Promise<Place | undefined>>();

  /** The claim of `doc` to the identity `write` has. Called in input order. */
  claim(doc: SourceDocument, write: Pick<EntryWrite, 'kind' | 'identityUrl' | 'identityAliases'>): IdentityClaim {
    const earlier: Promise<Place | undefined>[] = [];
    for (const url of [write.identityUrl, ...(write.identityAliases ?? [])]) {
      const holder = this.#holders.get(keyOf(write.kind, url));
      if (holder === undefined) continue;
      if (!(holder instanceof Promise)) return { refusal: repeatedRefusal(doc, write, holder), settle: NOTHING_TO_SETTLE };
      earlier.push(holder);
    }
    const here = placeOf(doc);
    let settle: (stored: boolean) => void = NOTHING_TO_SETTLE;
    const outcome = new Promise<boolean>((resolve) => (settle = resolve));
    const before = earlier.length === 0 ? undefined : Promise.all(earlier).then((places) => places.find((p) => p !== undefined));
    // The identity's stored document once this one is settled: the one before it, or this one.
    const holder = (before ?? Promise.resolve(undefined)).then(async (stored) => stored ?? ((await outcome) ? here : undefined));
    const key = keyOf(write.kind, write.identityUrl);
    this.#holders.set(key, holder);
    // Settled, the identity keeps its place alone (or nothing), unless a later claim took over the key.
    void holder.then((stored) => {
      if (this.#holders.get(key) !== holder) return;
      if (stored) this.#holders.set(key, stored);
      else this.#holders.delete(key);
    });
    const later = before?.then((stored) => (stored ? repeatedRefusal(doc, write, stored) : undefined));
    return later ? { later, settle } : { settle };
  }
}

const keyOf = (kind: string, url: string): string => `${kind} ${url}`;

const placeOf = (doc: SourceDocument): Place => (doc.line === undefined ? { file: doc.file } : { file: doc.file, line: doc.line });

/** "bad.jsonl:10: the same agent (https://...) as line 1 of this import: one document per identity; remove one of them". */
function repeatedRefusal(doc: SourceDocument, write: Pick<EntryWrite, 'kind' | 'identityUrl'>, earlier: Place): Refusal {
  const here = placeOf(doc);
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
