/**
 * Where a search's next page starts, kept in its page token: the offset reached, and marks of the
 * last hits shown. Offsets alone drift when the catalog changes between pages: an entry
 * registered above the page boundary pushed the last hit shown onto the next page again (a
 * duplicate), one removed above it pulled the next page's first hit back onto a page already
 * read (a gap). The next page is read from a window a little before the offset, and starts
 * right after the last hit shown wherever it now is; when neither of the marked hits is in the
 * window (moved far or gone) the offset decides, as before.
 *
 * The window is a constant few hits wider than the page, so the work per page does not grow with
 * the catalog.
 */
import { hash } from 'node:crypto';
import type { SearchHit } from '../contract/types.js';

/** Hits read before and after the page, to find the marks in: how far the boundary may move. */
export const CURSOR_SLACK = 10;
/** Hits marked at the end of a page: the last, and the one before it in case the last is removed. */
const MARKS = 2;

export interface SearchCursor {
  offset: number;
  /** Marks of the last hits shown, the last one last. */
  marks: string[];
}

/** A short fixed-size mark of a hit (a token stays well under its size limit whatever the names). */
export function markOf(hit: Pick<SearchHit, 'id' | 'match'>, resultsPer: 'entry' | 'match'): string {
  const key = resultsPer === 'entry' ? hit.id : `${hit.id}\u0000${hit.match.type}\u0000${hit.match.id ?? hit.match.name}`;
  return hash('sha256', key, 'base64url').slice(0, 10);
}

/** The position a page token holds: "<offset>" (tokens issued before marks) or "<offset>~<mark>~<mark>". */
export function encodeCursor(offset: number, shown: readonly SearchHit[], resultsPer: 'entry' | 'match'): string {
  const marks = shown.slice(-MARKS).map((h) => markOf(h, resultsPer));
  return [String(offset), ...marks].join('~');
}

/** The cursor of a position, or undefined when it is none (not a token's position). */
export function decodeCursor(position: string): SearchCursor | undefined {
  const [offset, ...marks] = position.split('~');
  if (!offset || !/^[0-9]{1,9}$/.test(offset) || marks.length > MARKS) return undefined;
  return { offset: Number(offset), marks };
}

/** Where to read the window of a cursor from, and how many hits, for pages of `limit`. */
export function windowOf(cursor: SearchCursor, limit: number): { start: number; size: number } {
  if (cursor.marks.length === 0) return { start: cursor.offset, size: limit };
  const start = Math.max(0, cursor.offset - CURSOR_SLACK);
  return { start, size: cursor.offset - start + limit + CURSOR_SLACK };
}

/**
 * The page in a window read from `start`: the `limit` hits after the latest marked hit found in
 * it, or from the cursor's offset when none is. Answers the page and its offset.
 */
export function pageAfter(
  cursor: SearchCursor,
  window: readonly SearchHit[],
  start: number,
  limit: number,
  resultsPer: 'entry' | 'match',
): { hits: SearchHit[]; offset: number } {
  let from = cursor.offset - start;
  if (cursor.marks.length > 0) {
    const marks = window.map((h) => markOf(h, resultsPer));
    for (let m = cursor.marks.length - 1; m >= 0; m--) {
      // Where the marked hit was when the page was shown; of hits with the same mark (two skills
      // of one id, a duplicate-skill-id warning), the one nearest that place: the first of them
      // showed the second again.
      const was = cursor.offset - start - (cursor.marks.length - m);
      let at = -1;
      for (let i = 0; i < marks.length; i++) {
        if (marks[i] === cursor.marks[m] && (at < 0 || Math.abs(i - was) < Math.abs(at - was))) at = i;
      }
      if (at >= 0) {
        from = at + 1;
        break;
      }
    }
  }
  return { hits: window.slice(from, from + limit), offset: start + from };
}
