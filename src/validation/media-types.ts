/**
 * Input and output modes are media types ("text/plain", "application/json"; A2A: "Defined as
 * media types"). Clients compare them with the types of the parts they send and accept, and the
 * registry's inputModes/outputModes search filters compare them too, so a bare "text" (7 of the
 * 37 cards in test/fixtures/corpus) matches nothing: the agent is registered but never found
 * by mode. A warning, since the schema types them as plain strings.
 */
import type { Finding } from '../contract/types.js';
import { isObject, pointer, quote, type JsonObject } from '../lib/json.js';

/** RFC 6838 type/subtype (restricted-name), "*" allowed as in "image/*", optional parameters. */
const MEDIA_TYPE = /^(\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})\/(\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126})\s*(;.*)?$/;

/** The media type meant by the short names cards use instead. */
const MEANT: Record<string, string> = {
  text: 'text/plain',
  plain: 'text/plain',
  txt: 'text/plain',
  string: 'text/plain',
  json: 'application/json',
  data: 'application/json',
  markdown: 'text/markdown',
  md: 'text/markdown',
  html: 'text/html',
  csv: 'text/csv',
  xml: 'application/xml',
  yaml: 'application/yaml',
  pdf: 'application/pdf',
  file: 'application/octet-stream',
  binary: 'application/octet-stream',
  image: 'image/*',
  png: 'image/png',
  jpeg: 'image/jpeg',
  jpg: 'image/jpeg',
  audio: 'audio/*',
  video: 'video/*',
};

/** The media type a short name ("text", "json") clearly means, or undefined. */
export function meantMediaType(name: string): string | undefined {
  const key = name.trim().toLowerCase();
  return Object.hasOwn(MEANT, key) ? MEANT[key] : undefined; // not "constructor" from the prototype
}

function modeFinding(mode: string, path: string): Finding {
  const meant = meantMediaType(mode);
  return {
    path,
    rule: 'invalid-media-type',
    message: `${quote(mode)} is not a media type (type/subtype)`,
    hint:
      (meant ? `Did you mean ${quote(meant)}? ` : 'Use a media type such as "text/plain", "application/json" or "image/png". ') +
      'Clients and the registry\'s inputModes/outputModes filters compare media types, so this mode matches nothing.',
  };
}

/** Warnings for every mode of the card and its skills that is not a media type. */
export function mediaTypeWarnings(card: JsonObject): Finding[] {
  const lists: Array<[string, unknown]> = [
    ['/defaultInputModes', card.defaultInputModes],
    ['/defaultOutputModes', card.defaultOutputModes],
  ];
  const skills = Array.isArray(card.skills) ? card.skills : [];
  skills.forEach((skill, i) => {
    if (!isObject(skill)) return;
    lists.push([pointer('/skills', i, 'inputModes'), skill.inputModes], [pointer('/skills', i, 'outputModes'), skill.outputModes]);
  });
  const out: Finding[] = [];
  for (const [path, list] of lists) {
    if (!Array.isArray(list)) continue;
    list.forEach((mode, i) => {
      // Non-strings are schema errors already.
      if (typeof mode === 'string' && !MEDIA_TYPE.test(mode)) out.push(modeFinding(mode, pointer(path, i)));
    });
  }
  return out;
}
