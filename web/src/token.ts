/**
 * The person's registry token, kept in sessionStorage only: it lasts as long as the tab, is
 * never written to localStorage or a cookie, and is sent only as an Authorization header to
 * this registry's own A2A endpoint.
 */
const KEY = 'a2a-registry.token';

export function savedToken(): string {
  try {
    return sessionStorage.getItem(KEY) ?? '';
  } catch {
    return '';
  }
}

export function saveToken(token: string): void {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    /* storage disabled: the token is used for this request only */
  }
}
