/**
 * Query strings that are not valid percent-encoded UTF-8, which every door refuses alike: the
 * query parser reads such bytes as U+FFFD, so a value was looked up, or said back, as "\uFFFD".
 */
import { codePointPrefix } from '../lib/code-points.js';
import { percentDecodedOrUndefined } from '../lib/percent-decoding.js';
import { PERCENT_ENCODING_RULE } from './errors.js';

/**
 * A query parameter whose name or value is not valid percent-encoded UTF-8 (`?contextId=%ff`),
 * or undefined. The query parser reads such bytes as U+FFFD, so `contextId=%ff` listed the tasks
 * of a context "\uFFFD" (none, 200) where the same bytes in the path are a 400.
 */
export function undecodableQueryParam(url: string): { message: string; field: string } | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  for (const pair of url.slice(q + 1).split('&')) {
    const eq = pair.indexOf('=');
    const [name, value] = eq < 0 ? [pair, ''] : [pair.slice(0, eq), pair.slice(eq + 1)];
    const decodedName = queryComponent(name);
    if (decodedName !== undefined && queryComponent(value) !== undefined) continue;
    const field = codePointPrefix(decodedName ?? name, 64);
    return {
      message: `The query parameter ${field} is not valid percent-encoded UTF-8: encode its ${decodedName === undefined ? 'name' : 'value'} ${PERCENT_ENCODING_RULE}`,
      field,
    };
  }
  return undefined;
}

/** A query component decoded ('+' is a space), or undefined when it is not valid percent-encoded UTF-8. */
const queryComponent = (component: string): string | undefined => percentDecodedOrUndefined(component.replace(/\+/g, ' '));
