/**
 * Opaque page tokens: a position plus a fingerprint of the request it belongs to, signed with
 * HMAC so that a token that was altered, truncated or reused for another query is refused with
 * a clear BAD_REQUEST instead of silently paging somewhere else.
 */
import { createHash, createHmac, hash, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { PAGE_TOKEN_INVALID, PAGE_TOKEN_OTHER_OPERATION, PAGE_TOKEN_OTHER_QUERY, badArguments } from '../contract/errors.js';
import type { Finding } from '../contract/types.js';
import { isObject } from '../lib/json.js';

/** The operations that issue page tokens: a token is read back only by the one that issued it. */
export type PagedOperation = 'search' | 'list';

/**
 * The refusal of a token this registry did not issue, or whose position the operation cannot read
 * (open() below; a store that never handed out the list's position; a search cursor that does not
 * decode): every undecodable token is refused with it, on every door. Its rule lets a door whose
 * requests carry the token under another name (the catalog's `after`, ARD's pageToken of the
 * previous answer) say it in its own words: the message names A2A's and MCP's nextPageToken. Its
 * path is the arguments' (/pageToken): each door roots it where its request has the token.
 */
export const pageTokenNotIssued = () =>
  badArguments(`The pageToken is not valid: ${PAGE_TOKEN_ADVICE}.`, [{ path: '/pageToken', message: NOT_ISSUED, rule: PAGE_TOKEN_INVALID }]);

/** What a client sends instead of a token the registry cannot use. */
const PAGE_TOKEN_ADVICE = 'pass the nextPageToken of the previous page unchanged, or leave it out for the first page';
const NOT_ISSUED = 'not a token this registry issued';

/**
 * The finding (its path aside) of a pageToken its schema refuses (request-schemas.ts pageTokenText):
 * empty, or longer than any this registry issues. No token it issued is either, so it is refused
 * as one not issued, under the same rule, saying `why` and what to send: it was a schema error
 * ("Too small: expected string to have >=1 characters") without the rule every other unusable
 * token has, nor a word of what to do.
 */
export const pageTokenOutOfLimits = (why: string): Omit<Finding, 'path'> => ({
  message: `${NOT_ISSUED}: ${why}`,
  hint: `${PAGE_TOKEN_ADVICE[0]!.toUpperCase()}${PAGE_TOKEN_ADVICE.slice(1)}.`,
  rule: PAGE_TOKEN_INVALID,
});

/**
 * The finding of a search's token issued for the same search with filter kind `kind` (rule
 * page-token-other-query): the MCP search tools each add their kind to the filter, and tell from
 * it which tool's a token is (mcp/tools.ts).
 */
export const issuedForKind = (kind: string): string => `issued for this search with filter kind "${kind}"`;

/**
 * The key page tokens are signed with when REGISTRY_PAGE_TOKEN_SECRET is unset: derived from the
 * registry's bearer tokens, so replicas given the same tokens agree. Through scrypt (16 MiB, about
 * 0.1 s), not one SHA-256: every page token is a signature that anyone who can search reads, and
 * a key that was a fast hash of the tokens let its holder test guesses of them offline, billions
 * a second (on a registry with one operator-chosen token, guesses of its admin token).
 */
export function pageTokenKeyOf(tokens: Iterable<string>): Promise<Buffer> {
  return scryptAsync([...tokens].sort().join(','), 'a2a-registry page tokens', 32, { N: 2 ** 14, r: 8, p: 1 });
}

const scryptAsync = promisify(scrypt) as (password: string, salt: string, length: number, options: { N: number; r: number; p: number }) => Promise<Buffer>;

export class PageTokens {
  private readonly key: Buffer;

  constructor(secret: string | Buffer) {
    this.key = createHash('sha256').update(secret).digest();
  }

  /** Fingerprint of the request the token continues: same query and filter, same token. */
  static fingerprint(request: unknown): string {
    // One-shot hash: every search the cache misses makes one, and a Hash object costs ~4x more.
    return hash('sha256', JSON.stringify(request), 'base64url').slice(0, 16);
  }

  /** A token for `operation`'s next page, which names the operation so another can say whose it is. */
  issue(position: string, fingerprint: string, operation: PagedOperation): string {
    return this.signed({ p: position, f: fingerprint, o: operation });
  }

  /**
   * Returns the position, or throws BAD_REQUEST when the token is not one this registry issued for
   * this request. `boundTo` names the arguments the fingerprint covers, for the message: a page
   * asked with another limit was told to send "the same query and filter", which it did. A token
   * `operation` did not issue (a search's sent to list) says whose it is: the same arguments
   * could never make it fit. (Tokens issued before they named their operation are told as before.)
   */
  read(token: string, fingerprint: string, operation: PagedOperation, boundTo = 'query and filter'): string {
    const page = this.open(token);
    if (!page) throw pageTokenNotIssued();
    if (page.operation !== undefined && page.operation !== operation) {
      const o = page.operation;
      throw badArguments(
        `The pageToken is a ${o}'s nextPageToken, not a ${operation}'s: send it with ${o}, the operation whose answer gave it, or leave it out for the first page of this ${operation}.`,
        [{ path: '/pageToken', message: `issued by ${o}`, rule: PAGE_TOKEN_OTHER_OPERATION }],
      );
    }
    if (page.fingerprint !== fingerprint) {
      throw badArguments(`The pageToken belongs to another query: send the same ${boundTo} as the page it came from, or leave it out for the first page.`, [
        // The rule lets a door that names the arguments otherwise (MCP tools) say it in its own words.
        { path: '/pageToken', message: 'issued for another query', rule: PAGE_TOKEN_OTHER_QUERY },
      ]);
    }
    return page.position;
  }

  /** Whether `token` is a page token this registry signed for the request of `fingerprint`. */
  issuedFor(token: string, fingerprint: string): boolean {
    return this.open(token)?.fingerprint === fingerprint;
  }

  /**
   * The operation that issued `token`, when it is a page token this registry signed (undefined
   * otherwise, and for tokens issued before they named their operation): for a door whose own
   * tokens wrap the registry's (ARD's POST /search) to tell a token of the other operation from
   * one it never issued.
   */
  issuer(token: string): PagedOperation | undefined {
    return this.open(token)?.operation;
  }

  /**
   * The page a token holds, or undefined when it is no page token of this registry: the one rule
   * for every token that cannot be read, so each is refused alike (PAGE_TOKEN_INVALID). Not only
   * a signature that does not match: one of other characters than the signature's (whose UTF-8
   * is longer than the expected signature, where timingSafeEqual throws: that was an internal
   * error), or a signed payload that is no page (not JSON, or JSON without a position and a
   * fingerprint: it was told "belongs to another query").
   */
  private open(token: string): { position: string; fingerprint: string; operation?: PagedOperation } | undefined {
    const decoded = this.verified(token);
    if (!isObject(decoded)) return undefined;
    const { p, f, o } = decoded;
    if (typeof p !== 'string' || typeof f !== 'string') return undefined;
    if (o === undefined) return { position: p, fingerprint: f };
    return o === 'search' || o === 'list' ? { position: p, fingerprint: f, operation: o } : undefined;
  }

  /**
   * A door's own token, which wraps the registry's with what the door needs beside it (ARD's POST
   * /search: the first page's best score): `content` as JSON, signed as the registry's tokens are,
   * for `purpose` (which no registry token's signature is made for, so neither reads as the other).
   * Any change to it, the content beside the registry's token included, or a character added
   * (whitespace, which base64url decoding skipped), fails its signature: it was plain base64url,
   * and an altered score was taken.
   */
  seal(purpose: string, content: unknown): string {
    return this.signed(content, purpose);
  }

  /** What seal() put in `token` for `purpose`, or undefined when it is no token sealed for it. */
  unseal(purpose: string, token: string): unknown {
    return this.verified(token, purpose);
  }

  /**
   * The JSON a token signed by this registry carries (for `purpose`, a sealed one; else a page
   * token), or undefined. A signature of other characters than base64url's is refused by its
   * length, before timingSafeEqual, which throws on its longer UTF-8 (that was an internal error).
   */
  private verified(token: string, purpose?: string): unknown {
    const [payload, signature, extra] = token.split('.');
    if (payload === undefined || signature === undefined || extra !== undefined) return undefined;
    const given = Buffer.from(signature);
    const expected = Buffer.from(this.signatureOf(payload, purpose));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
  }

  /** `content` as a token: its JSON in base64url, then its signature (for `purpose`, a sealed one; else a page token). verified() reads it. */
  private signed(content: unknown, purpose?: string): string {
    const payload = Buffer.from(JSON.stringify(content)).toString('base64url');
    return `${payload}.${this.signatureOf(payload, purpose)}`;
  }

  /** The signature of `payload`: a sealed token's is made for its purpose, so that no page token's signature is one of it. */
  private signatureOf(payload: string, purpose?: string): string {
    return this.sign(purpose === undefined ? payload : `${purpose}:${payload}`);
  }

  private sign(payload: string): string {
    return createHmac('sha256', this.key).update(payload).digest('base64url').slice(0, 22);
  }
}
