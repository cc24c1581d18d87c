/**
 * Where a search's next page starts, kept in its page token: the offset reached, marks of the
 * last hits shown and marks of the hits that were next. Offsets alone drift when the catalog
 * changes between pages: an entry registered above the page boundary pushed the last hit shown
 * onto the next page again (a duplicate), one removed above it pulled the next page's first hit
 * back onto a page already read (a gap). The next page is read from a window around the offset,
 * and starts at the boundary the marks found in it agree on best; when none of them is in the
 * window (moved far or gone) the offset decides, as before.
 *
 * Marks of both sides of the boundary: removing what a page showed (every hit of it, marks
 * included) leaves the next hits to find it by, and an update that moves the last hit shown far
 * (its relevance changed: ties are ordered by registration, which an update keeps) is outvoted
 * by the marks still either side. The window reaches a page and a
 * few hits back, so a whole page removed is found, and a few hits on; the work per page grows
 * with the page, not with the catalog.
 */
import { hash } from 'node:crypto';
import type { SearchHit } from '../contract/types.js';

/** Hits read beyond the page either way, to find the marks in: how far the boundary may move. */
export const CURSOR_SLACK = 10;
/** Hits marked either side of a page's end: two, in case one is removed. */
const MARKS = 2;
/** How a mark of a hit not shown yet is told from one shown, in a token's position. */
const NEXT = '+';

export interface SearchCursor {
  offset: number;
  /** Marks of the last hits shown, the last one last. */
  marks: string[];
  /** Marks of the hits after them, the first one first (absent in tokens issued before). */
  next: string[];
}

/** A short fixed-size mark of a hit (a token stays well under its size limit whatever the names). */
export function markOf(hit: Pick<SearchHit, 'id' | 'match'>, resultsPer: 'entry' | 'match'): string {
  const key = resultsPer === 'entry' ? hit.id : `${hit.id}\u0000${hit.match.type}\u0000${hit.match.id ?? hit.match.name}`;
  return hash('sha256', key, 'base64url').slice(0, 10);
}

/**
 * The position a page token holds: "<offset>" (tokens issued before marks), "<offset>~<mark>~<mark>"
 * (before next marks) or "<offset>~<mark>~<mark>~+<next>~+<next>". Marks are base64url: no "~" or "+".
 */
export function encodeCursor(offset: number, shown: readonly SearchHit[], next: readonly SearchHit[], resultsPer: 'entry' | 'match'): string {
  const marks = shown.slice(-MARKS).map((h) => markOf(h, resultsPer));
  const after = next.slice(0, MARKS).map((h) => NEXT + markOf(h, resultsPer));
  return [String(offset), ...marks, ...after].join('~');
}

/** The cursor of a position, or undefined when it is none (not a token's position). */
export function decodeCursor(position: string): SearchCursor | undefined {
  const [offset, ...all] = position.split('~');
  if (!offset || !/^[0-9]{1,9}$/.test(offset)) return undefined;
  const marks = all.filter((m) => !m.startsWith(NEXT));
  const next = all.filter((m) => m.startsWith(NEXT)).map((m) => m.slice(NEXT.length));
  if (marks.length > MARKS || next.length > MARKS) return undefined;
  return { offset: Number(offset), marks, next };
}

/** Hits to read beyond a page of `limit` for its token's next marks. */
export const LOOKAHEAD = MARKS;

/** Where to read the window of a cursor from, and how many hits, for pages of `limit`. */
export function windowOf(cursor: SearchCursor, limit: number): { start: number; size: number } {
  if (cursor.marks.length === 0 && cursor.next.length === 0) return { start: cursor.offset, size: limit + LOOKAHEAD };
  const start = Math.max(0, cursor.offset - limit - CURSOR_SLACK);
  return { start, size: cursor.offset - start + limit + CURSOR_SLACK };
}

/**
 * The page in a window read from `start`: the `limit` hits from the boundary its marks agree on
 * best (the most marks shown before it and next after it; of those, the one nearest the
 * offset), or from the cursor's offset when no mark is in it. Answers the page, its offset and
 * the hits after it in the window.
 */
export function pageAfter(
  cursor: SearchCursor,
  window: readonly SearchHit[],
  start: number,
  limit: number,
  resultsPer: 'entry' | 'match',
): { hits: SearchHit[]; offset: number; next: SearchHit[] } {
  const was = cursor.offset - start;
  let from = was;
  const windowMarks = cursor.marks.length + cursor.next.length > 0 ? window.map((h) => markOf(h, resultsPer)) : [];
  // Where each mark is now: of hits with the same mark (two skills of one id, a duplicate-skill-id
  // warning), the one nearest where the marked hit was when the page was shown.
  const nearest = (mark: string, place: number): number => {
    let at = -1;
    for (let i = 0; i < windowMarks.length; i++) {
      if (windowMarks[i] === mark && (at < 0 || Math.abs(i - place) < Math.abs(at - place))) at = i;
    }
    return at;
  };
  const shown = cursor.marks.map((m, k) => nearest(m, was - (cursor.marks.length - k))).filter((at) => at >= 0);
  const next = cursor.next.map((m, k) => nearest(m, was + k)).filter((at) => at >= 0);
  let agreeing = 0;
  for (const boundary of [...shown.map((at) => at + 1), ...next]) {
    const votes = shown.filter((at) => at < boundary).length + next.filter((at) => at >= boundary).length;
    if (votes > agreeing || (votes === agreeing && Math.abs(boundary - was) < Math.abs(from - was))) {
      agreeing = votes;
      from = boundary;
    }
  }
  return { hits: window.slice(from, from + limit), offset: start + from, next: window.slice(from + limit, from + limit + LOOKAHEAD) };
}
