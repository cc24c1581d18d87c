/**
 * How many findings a refusal carries, and how many of a request's items its message names: the
 * one bound of every door (A2A on every binding, MCP tools, ARD's POST /search, the catalogs).
 * A refusal that said one thing per bad item of the request grew with it: a 64 KB POST /search
 * of short unsupported filter keys was answered 1.6 MB (a finding with a 200-byte hint per key,
 * every key named in the message), an A2A or MCP search of them 300 KB (each key named in the
 * message, the finding and the text beside them). Bounded, an answer is never many times larger
 * than the request: the first findings and names, then how many more.
 */
import type { Finding } from './types.js';

/** Findings a refusal lists at most, the bound a document's verdict has (validation/types.ts): then one finding saying how many more. */
export const MAX_FINDINGS = 50;
/** Items of the request (keys, values) a refusal's message names at most: then how many more. */
export const MAX_NAMED = 10;
/** The rule of the finding that stands for those left out. */
export const MORE_FINDINGS = 'more-findings';

const count = (n: number): string => n.toLocaleString('en-US');

/**
 * `findings` as a refusal carries them: the first `max` (MAX_FINDINGS), then one saying how many
 * more were left out (at the path of the first of them), so that a client sees the list is cut,
 * not complete.
 */
export function boundedFindings(findings: readonly Finding[], max: number = MAX_FINDINGS): Finding[] {
  if (findings.length <= max) return [...findings];
  return [...findings.slice(0, max), moreFindings(findings[max]!.path, findings.length - max, max)];
}

/** The finding that stands for `left` findings not listed after the first `listed`, at `path` (the first of them). */
export function moreFindings(path: string, left: number, listed: number): Finding {
  return {
    path,
    rule: MORE_FINDINGS,
    message: `and ${count(left)} more finding${left === 1 ? '' : 's'}, not listed: a refusal lists the first ${listed}`,
    hint: 'Fix the ones listed (they are likely alike), then send the request again to see any left.',
  };
}

/** Names (each already quoted and clipped) joined by ", ": the first MAX_NAMED, then "and N more". */
export function namedList(names: readonly string[]): string {
  if (names.length <= MAX_NAMED) return names.join(', ');
  return `${names.slice(0, MAX_NAMED).join(', ')} and ${count(names.length - MAX_NAMED)} more`;
}
