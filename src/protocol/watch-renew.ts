/**
 * A watch's renewal, `{"renew": {}}` in a message on its task, checked as strictly as every other
 * operation (operations/request-parser.ts): the arguments an empty object (a key inside is
 * refused naming the keys accepted: none), one operation in the message, and nothing else but
 * text beside it, which no operation reads. Before, any value renewed: {"renew": {"ttlSeconds":
 * 60}}, {"renew": {"expiresAt": ...}}, "yes", null or [] all renewed for the full time to live,
 * and {"renew": {}, "watch": {...}} renewed and dropped the watch it asked for, unsaid.
 */
import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { z } from 'zod';
import { isObject, quote } from '../lib/json.js';
import { namedList } from '../contract/findings.js';
import { OPERATION_NAMES } from '../operations/operation.js';
import { partWords, type PartWords } from '../operations/part-words.js';
import { findingsSaid, zodFindings } from '../operations/request-parser.js';

/** The renewal's arguments: none (the watch runs for its time to live from now, a setting of the registry's). */
const renewSchema = z.strictObject({});

const SHAPE = 'a renewal is one data part {"renew": {}} (the watch then runs for REGISTRY_WATCH_TTL_SECONDS from now)';

const PART_NAMES = { raw: 'a file part', url: 'a URL part' } as const;

/** Refuses (invalid params) a message on a watch's task that is not exactly a renewal; `words`: how the client writes parts. */
export function requireRenewal(message: Message, words: PartWords = partWords()): void {
  const operations: string[] = [];
  let renewAt = 0;
  let renewArgs: unknown;
  message.parts.forEach((part, index) => {
    const content = part.content;
    if (content?.$case === 'text') return;
    if (content?.$case !== 'data') throw new RequestMalformedError(`Part ${index} is ${content ? PART_NAMES[content.$case] : 'empty'}: ${SHAPE}.`);
    const data: unknown = content.value;
    if (!isObject(data)) throw new RequestMalformedError(`Data part ${index} is not a JSON object: ${SHAPE}.`);
    const unknown = Object.keys(data).filter((key) => key !== 'renew' && !(OPERATION_NAMES as readonly string[]).includes(key));
    if (unknown.length > 0) throw new RequestMalformedError(`Data part ${index} has unknown key(s) ${namedList(unknown.map((k) => quote(k, 60)))}: ${SHAPE}.`);
    for (const key of Object.keys(data)) {
      operations.push(key);
      if (key === 'renew') {
        renewAt = index;
        renewArgs = data[key];
      }
    }
  });
  if (operations.length > 1) {
    throw new RequestMalformedError(`The message carries ${operations.length} operations (${operations.join(', ')}); send exactly one per message: ${SHAPE}.`);
  }
  const parsed = renewSchema.safeParse(renewArgs);
  if (!parsed.success) {
    const details = zodFindings(parsed.error, `${words.dataAt(renewAt)}/renew`, renewSchema, renewArgs);
    throw new RequestMalformedError(`The "renew" arguments are not valid: ${findingsSaid(details)}. Send {"renew": {}}.`);
  }
}
