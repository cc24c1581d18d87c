/**
 * URLs as they may appear in logs and error messages: a database URL carries its password
 * (postgres://user:password@host/db), which must never be printed.
 */

/** `url` with its password replaced by *** (unchanged without one); undefined when it is no URL. */
export function withoutPassword(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (!parsed.password) return url;
  parsed.password = '***';
  return parsed.toString();
}

/** How to write a PostgreSQL URL, for the errors about one that does not parse. */
export const POSTGRES_URL_FORM =
  'write it as postgres://user:password@host:5432/database, with reserved characters in the user name or password (@ : / ? # [ ] %) percent-encoded';
