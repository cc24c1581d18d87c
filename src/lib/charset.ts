/**
 * The charset a Content-Type declares. JSON exchanged between systems MUST be UTF-8 (RFC 8259
 * §8.1; A2A and MCP say so too): the doors refuse a request body declared otherwise (415), and a
 * document the registry fetches that is declared otherwise and does not read as UTF-8 JSON is
 * refused saying so, not with the parser's complaint about the bytes.
 */

/** The charset parameter of a Content-Type, lower-cased (quotes dropped); undefined when none is declared. */
export function declaredCharset(contentType: string | undefined): string | undefined {
  const match = contentType?.match(/;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i);
  return match ? (match[1] ?? match[2] ?? '').toLowerCase() : undefined;
}

/** The charset a Content-Type declares when it is not UTF-8 (nor its common misspelling utf8); undefined otherwise. */
export function otherThanUtf8(contentType: string | undefined): string | undefined {
  const charset = declaredCharset(contentType);
  return charset === undefined || charset === 'utf-8' || charset === 'utf8' ? undefined : charset;
}
