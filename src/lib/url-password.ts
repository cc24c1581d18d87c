/**
 * URLs as they may appear in logs and error messages: a database URL carries its password
 * (postgres://user:password@host/db, or ?password=... as pg reads it too), which must never be
 * printed. Every place that shows a database URL shows it through withoutPassword.
 */
import { percentDecodedOrUndefined } from './percent-decoding.js';

/**
 * Query parameters of a database URL shown as they are: where and how it connects, none of them
 * secret. Every other one is masked: pg-connection-string passes each parameter on (password,
 * sslpassword, sslkey, ...), and whatever a driver reads next may be a secret too.
 */
const SHOWN_PARAMETERS = new Set([
  'host', 'hostaddr', 'port', 'dbname', 'db', 'user', 'application_name', 'fallback_application_name', 'client_encoding', 'encoding',
  'connect_timeout', 'keepalives', 'keepalives_idle', 'keepalives_interval', 'keepalives_count', 'tcp_user_timeout',
  'ssl', 'sslmode', 'sslnegotiation', 'sslrootcert', 'sslcert', 'sslcrl', 'sslcrldir', 'sslsni', 'ssl_min_protocol_version', 'ssl_max_protocol_version',
  'target_session_attrs', 'load_balance_hosts', 'gssencmode', 'channel_binding', 'require_auth', 'replication', 'uselibpqcompat',
  'statement_timeout', 'query_timeout', 'lock_timeout', 'idle_in_transaction_session_timeout',
]);

const MASK = '***';

/**
 * `url` with its password replaced by *** (user:***@host), and the value of every query parameter
 * not known to be harmless (password=***, sslpassword=***); unchanged without any. Undefined when
 * it is no URL: what in it is a secret cannot be told then.
 */
export function withoutPassword(url: string): string | undefined {
  const credentialsMasked = withoutStrayUserinfo(url);
  if (credentialsMasked === undefined) return undefined;
  const masked = withoutSecretParameters(credentialsMasked);
  let parsed: URL;
  try {
    parsed = new URL(masked);
  } catch {
    return undefined;
  }
  if (!parsed.password) return masked;
  parsed.password = MASK;
  return parsed.toString();
}

/**
 * `url` with everything between `//` and its last '@' masked when that '@' comes after the end of
 * the authority: a password with an unencoded '/', '?' or '#' (postgres://user:12/ab@host/db)
 * ends the authority early, so the URL parses with no password at all (host "user", port 12) and
 * was shown whole, the password in its path or query. Masking a rare '@' in a path or query
 * value with it hides more than needed, never a secret. Undefined for a URL with an '@' and no
 * `//` (user:password@host/db, postgres:user:password@host/db): it parses, its "scheme" the user
 * name, with no password to mask, and where the secret ends cannot be told.
 */
function withoutStrayUserinfo(url: string): string | undefined {
  const at = url.lastIndexOf('@');
  if (at === -1) return url;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (!scheme) return undefined;
  const start = scheme[0].length;
  const authorityEnd = url.slice(start).search(/[/?#\\]/);
  if (authorityEnd === -1 || at < start + authorityEnd) return url;
  return `${url.slice(0, start)}${MASK}${url.slice(at)}`;
}

/** The query's parameter values masked but for SHOWN_PARAMETERS, the text otherwise as it was (no re-encoding). */
function withoutSecretParameters(url: string): string {
  const start = url.indexOf('?');
  if (start === -1) return url;
  const end = url.indexOf('#', start);
  const query = url.slice(start + 1, end === -1 ? undefined : end);
  const shown = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq === -1 || eq === pair.length - 1) return pair;
      return SHOWN_PARAMETERS.has(decodedName(pair.slice(0, eq))) ? pair : `${pair.slice(0, eq)}=${MASK}`;
    })
    .join('&');
  return `${url.slice(0, start + 1)}${shown}${end === -1 ? '' : url.slice(end)}`;
}

function decodedName(name: string): string {
  return (percentDecodedOrUndefined(name.replace(/\+/g, ' ')) ?? name).toLowerCase();
}

/** How to write a PostgreSQL URL, for the errors about one that does not parse. */
export const POSTGRES_URL_FORM =
  'write it as postgres://user:password@host:5432/database, with reserved characters in the user name or password (@ : / ? # [ ] %) percent-encoded';

/**
 * A value as an error message may show it: a URL with its password masked (withoutPassword);
 * undefined for a value that is no URL but may hold one (user:pass@..., ...?password=...), where
 * its secret ends cannot be told. Whitespace around it is kept as it was (masking re-writes the
 * URL without it, and a refusal of that whitespace then showed a valid URL).
 */
export function shownSettingValue(value: string): string | undefined {
  const [, before, url, after] = /^(\s*)(.*?)(\s*)$/s.exec(value)!;
  const masked = withoutPassword(url!);
  if (masked !== undefined) return `${before}${masked}${after}`;
  return /[@?]/.test(value) ? undefined : value;
}

/**
 * A URL the operator configured (an allow-listed JWKS, a service), as logs and messages name it:
 * withoutPassword's form, its user name's password and query values masked (a key or token in
 * ?token=... is as much a secret as a password); `otherwise` where what in it is a secret cannot be told.
 */
export function shownUrl(url: string, otherwise: string): string {
  return withoutPassword(url) ?? otherwise;
}

/**
 * `text` (an error's message, which often names the URL it fetched) with `url` in it, as given
 * and as the URL parser writes it, replaced by `shown`.
 */
export function withUrlShown(text: string, url: string, shown: string): string {
  let href = url;
  try {
    href = new URL(url).href;
  } catch {
    // not a URL: only the given form can appear
  }
  let out = text;
  for (const form of new Set([url, href])) if (form !== shown) out = out.split(form).join(shown);
  return out;
}
