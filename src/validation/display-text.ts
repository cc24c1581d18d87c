/**
 * The text people read: names, descriptions, tags and examples are shown in search results, on
 * the web page and in terminals (the CLI), so they must not carry what changes how they look.
 *
 * - Control characters (ESC, BEL, NUL, C1 ...): a terminal runs them (recolour, retitle, clear
 *   the screen of whoever lists the registry). Errors everywhere; tab, line feed and carriage
 *   return are allowed in running text but not in a name.
 * - Unpaired surrogates: not Unicode at all (JSON allows "\ud800"; no encoder can write it).
 * - Bidirectional controls (U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates):
 *   they reorder what follows, so "Evil\u202Eexe.txt" shows as "Eviltxt.exe". Errors in a name,
 *   which identifies the entry to people; a warning in running text, where right-to-left
 *   languages may have a use for them.
 * - A name of nothing but spaces names nothing, nor does one of only invisible characters (zero-
 *   width spaces, joiners, direction marks: Unicode's format characters), which shows as blank.
 *
 * Ids, versions, URLs, bindings and media types (`tokens`) are one token each, which programs
 * read and logs, terminals and pages show: any control character (tab and line breaks too) or
 * bidirectional control in one is an error. "1.0\n2", a skill id "x\u001b[31m" or a
 * documentationUrl ending in "\r\n" passed: they split a log line or recolour a terminal, and
 * a URL parser drops tabs and line breaks, so the link followed is not the one shown. (Endpoint
 * URLs have their own rule in ./endpoint-urls.ts.)
 */
import type { Finding } from '../contract/types.js';
import { isObject, pointer } from '../lib/json.js';
import { LONE_SURROGATE } from '../lib/code-points.js';

/**
 * Where the texts of a document are, as JSON Pointer patterns ("*": any array index, "{}": any
 * member of an object; "{key}", last: the member names themselves, for a name that is a key, as a
 * tool parameter's or an OAuth scope's is).
 */
export interface TextFields {
  names: readonly string[];
  texts: readonly string[];
  /** Texts the specification requires: one of only white space is as empty as "", which the schema refuses. */
  requiredTexts?: readonly string[];
  /** Entries of a list that say nothing when empty or blank (a tag, an example): a warning. */
  listedTexts?: readonly string[];
  /** Ids, versions, URLs and other one-token values (see the module comment). */
  tokens?: readonly string[];
  /** Tokens the schemas require to be non-empty: one of only white space is as empty as "". */
  requiredTokens?: readonly string[];
  /**
   * Endpoint URLs: their control characters are ./endpoint-urls.ts's (url-control-character);
   * a bidirectional control, which a URL parser percent-encodes without a word, is refused here.
   */
  endpointUrls?: readonly string[];
}

export const AGENT_CARD_TEXT: TextFields = {
  names: [
    '/name',
    '/provider/organization',
    '/skills/*/name',
    // What the web page shows of the security a caller needs: the schemes' names, their OAuth
    // scopes' names and the scopes a requirement asks for, which a client requests by name.
    '/securitySchemes/{key}',
    '/securitySchemes/{}/{}/flows/{}/scopes/{key}',
    '/securitySchemes/{}/flows/{}/scopes/{key}',
    '/securityRequirements/*/schemes/{}/list/*',
    '/skills/*/securityRequirements/*/schemes/{}/list/*',
    '/security/*/{}/*',
    '/skills/*/security/*/{}/*',
  ],
  texts: [
    '/description',
    '/skills/*/description',
    '/skills/*/tags/*',
    '/skills/*/examples/*',
    '/capabilities/extensions/*/description',
    '/securitySchemes/{}/{}/description',
    '/securitySchemes/{}/description',
    '/securitySchemes/{}/{}/flows/{}/scopes/{}',
    '/securitySchemes/{}/flows/{}/scopes/{}',
  ],
  requiredTexts: ['/description', '/skills/*/description'],
  listedTexts: ['/skills/*/tags/*', '/skills/*/examples/*'],
  // Both generations' fields: a path the card does not have finds nothing.
  tokens: [
    '/version',
    '/skills/*/id',
    '/documentationUrl',
    '/iconUrl',
    '/provider/url',
    '/protocolVersion',
    '/preferredTransport',
    '/supportedInterfaces/*/protocolBinding',
    '/supportedInterfaces/*/protocolVersion',
    '/supportedInterfaces/*/tenant',
    '/additionalInterfaces/*/transport',
    '/capabilities/extensions/*/uri',
    '/defaultInputModes/*',
    '/defaultOutputModes/*',
    '/skills/*/inputModes/*',
    '/skills/*/outputModes/*',
    // What a client reads to authenticate: URLs it fetches, the header or parameter it sends
    // ("{}": any scheme name; v1.0 nests each scheme in its kind's member, v0.3 does not).
    '/securitySchemes/{}/{}/openIdConnectUrl',
    '/securitySchemes/{}/openIdConnectUrl',
    '/securitySchemes/{}/{}/oauth2MetadataUrl',
    '/securitySchemes/{}/oauth2MetadataUrl',
    '/securitySchemes/{}/{}/flows/{}/{}',
    '/securitySchemes/{}/flows/{}/{}',
    '/securitySchemes/{}/{}/name',
    '/securitySchemes/{}/name',
    '/securitySchemes/{}/{}/scheme',
    '/securitySchemes/{}/scheme',
    '/securitySchemes/{}/{}/bearerFormat',
    '/securitySchemes/{}/bearerFormat',
  ],
  endpointUrls: ['/supportedInterfaces/*/url', '/url', '/additionalInterfaces/*/url'],
  requiredTokens: ['/version', '/skills/*/id', '/supportedInterfaces/*/protocolBinding', '/supportedInterfaces/*/protocolVersion', '/provider/url'],
};

/** An MCP server registration: its metadata under /mcpServer, its toolspec under /toolspec. */
export const MCP_SERVER_TEXT: TextFields = {
  // A tool's annotations.title is a display title too (searched, as its title is). Its parameters'
  // names are what a client calls it with, and the web page lists them with their descriptions:
  // "confirm\u202eeurt\u202c" showed as "confirmtrue".
  names: [
    '/mcpServer/name',
    '/mcpServer/title',
    '/toolspec/tools/*/name',
    '/toolspec/tools/*/title',
    '/toolspec/tools/*/annotations/title',
    '/toolspec/tools/*/inputSchema/properties/{key}',
  ],
  texts: ['/mcpServer/description', '/toolspec/tools/*/description', '/toolspec/tools/*/inputSchema/properties/{}/description'],
  tokens: ['/mcpServer/version'],
  endpointUrls: ['/mcpServer/url'],
};

const CONTROL_IN_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const CONTROL_IN_NAME = /[\u0000-\u001F\u007F-\u009F]/;
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;

/** The findings on `doc`'s display texts: errors, and warnings (bidirectional controls in running text). */
export function displayTextFindings(doc: unknown, fields: TextFields): { errors: Finding[]; warnings: Finding[] } {
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  const walk = walkOf(fields);
  // One key stack and one visitor per kind of check for the whole document, the pattern at hand
  // in `isName` / `token`: a closure per pattern (some fifty per card), a key list per pattern
  // and the token list and its Set rebuilt per call were most of what this check allocated.
  const keys: (string | number)[] = [];
  let isName = false;
  const visitText = (value: string, keys: Keys): void => {
    const control = (isName ? CONTROL_IN_NAME : CONTROL_IN_TEXT).exec(value);
    if (control) {
      errors.push({
        path: pathOf(keys),
        rule: 'control-character',
        message: `contains the control character ${codePoint(control[0])} at position ${control.index}`,
        hint: isName
          ? 'Names are shown in terminals and on web pages, where control characters act instead of showing: remove it (a name is one line).'
          : 'Texts are shown in terminals and on web pages, where control characters act instead of showing: remove it.',
      });
    } else if (LONE_SURROGATE.test(value)) {
      errors.push({ path: pathOf(keys), rule: 'invalid-unicode', message: 'contains an unpaired surrogate (\\ud800-\\udfff alone), which is no Unicode character', hint: 'Fix the escape: a character beyond U+FFFF is a pair of them.' });
    } else if (isName && value !== '' && isBlank(value)) {
      errors.push({ path: pathOf(keys), rule: 'blank-name', message: blankMessage(value), hint: 'Give it a name people can read.' });
    }
    const bidi = BIDI_CONTROL.exec(value);
    if (bidi) {
      (isName ? errors : warnings).push({
        path: pathOf(keys),
        rule: 'bidi-control',
        message: `contains the bidirectional control ${codePoint(bidi[0])} at position ${bidi.index}, which reorders how the text after it is displayed`,
        hint: isName
          ? 'A name identifies the entry to people, and a reordered one can pass for another: remove it.'
          : 'Unless the text needs it for right-to-left script, remove it: it can make the text read differently from what it says.',
      });
    }
  };
  for (const text of walk.texts) {
    isName = text.isName;
    visitStringsAt(doc, text.steps, 0, keys, visitText);
  }
  let token: TokenWalk | undefined;
  const visitToken = (value: string, keys: Keys): void => {
    const control = (token!.controls ? CONTROL_IN_NAME.exec(value) : null) ?? BIDI_CONTROL.exec(value);
    if (!control) {
      // " " for a skill id or a version is as empty as "", which the schemas refuse (an
      // optional token's "" and " " get the same warnings, if any).
      if (token!.required && value !== '' && isBlank(value)) {
        errors.push({ path: pathOf(keys), rule: 'blank-value', message: blankMessage(value), hint: 'Give it a value: the field is required, and white space is none.' });
      }
      return;
    }
    const what = BIDI_CONTROL.test(control[0]) ? 'bidirectional control' : 'control character';
    errors.push({
      path: pathOf(keys),
      rule: 'control-character',
      message: `contains the ${what} ${codePoint(control[0])} at position ${control.index}`,
      hint: 'An id, version or URL is one token that programs read and logs and terminals show, where a control character acts instead of showing: remove it (a URL percent-encodes a character it must carry, e.g. %0A).',
    });
  };
  for (token of walk.tokens) visitStringsAt(doc, token.steps, 0, keys, visitToken);
  const visitRequiredText = (value: string, keys: Keys): void => {
    if (value === '' || !isBlank(value)) return;
    const path = pathOf(keys);
    if (errors.some((e) => e.path === path)) return;
    errors.push({ path, rule: 'blank-text', message: blankMessage(value), hint: 'Write what it describes: people and search read it.' });
  };
  for (const steps of walk.requiredTexts) visitStringsAt(doc, steps, 0, keys, visitRequiredText);
  const visitListedText = (value: string, keys: Keys): void => {
    if (!isBlank(value)) return;
    const path = pathOf(keys);
    if (errors.some((e) => e.path === path)) return;
    // A tag "" shows as an empty chip and no filter can ask for it (a filter value must have a character).
    const what = path.includes('/tags/') ? 'tag' : 'example';
    warnings.push({ path, rule: 'blank-text', message: value === '' ? `the ${what} is empty` : blankMessage(value), hint: `Remove it, or write the ${what}: an empty one says nothing to people or search.` });
  };
  for (const steps of walk.listedTexts) visitStringsAt(doc, steps, 0, keys, visitListedText);
  return { errors, warnings };
}

/** White space and format characters (zero-width space and joiners, direction marks, BOM, soft hyphen): nothing that shows. */
const BLANK = /^[\s\p{Cf}]*$/u;
const isBlank = (value: string): boolean => BLANK.test(value);
function blankMessage(value: string): string {
  const invisible = /\S/u.exec(value);
  return invisible ? `shows nothing: it is only invisible characters and white space (${codePoint(invisible[0])} at position ${invisible.index})` : 'is only white space';
}

const codePoint = (c: string): string => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;

/** The keys from the document to a string (see visitStringsAt). */
type Keys = readonly (string | number)[];

/** The JSON Pointer of a string found: built only for a finding (most strings pass). */
const pathOf = (keys: Keys): string => pointer('', ...keys);

/** A token pattern as the walk reads it: its steps, whether control characters count, whether it is required. */
interface TokenWalk {
  steps: readonly string[];
  controls: boolean;
  required: boolean;
}

/** A TextFields' patterns split into steps, in the order the checks read them. */
interface FieldWalk {
  texts: readonly { steps: readonly string[]; isName: boolean }[];
  tokens: readonly TokenWalk[];
  requiredTexts: readonly (readonly string[])[];
  listedTexts: readonly (readonly string[])[];
}

/** Made once per TextFields (there are two, and every registration reads one). */
const fieldWalks = new WeakMap<TextFields, FieldWalk>();

function walkOf(fields: TextFields): FieldWalk {
  let walk = fieldWalks.get(fields);
  if (walk) return walk;
  const stepsOf = (pattern: string): readonly string[] => pattern.split('/').slice(1);
  const required = new Set(fields.requiredTokens);
  walk = {
    texts: [...fields.names.map((p) => ({ steps: stepsOf(p), isName: true })), ...fields.texts.map((p) => ({ steps: stepsOf(p), isName: false }))],
    tokens: [
      ...(fields.tokens ?? []).map((p) => ({ steps: stepsOf(p), controls: true, required: required.has(p) })),
      ...(fields.endpointUrls ?? []).map((p) => ({ steps: stepsOf(p), controls: false, required: required.has(p) })),
    ],
    requiredTexts: (fields.requiredTexts ?? []).map(stepsOf),
    listedTexts: (fields.listedTexts ?? []).map(stepsOf),
  };
  fieldWalks.set(fields, walk);
  return walk;
}

/**
 * Calls `visit` with each string at the steps of a pointer pattern in `value`, in document order,
 * and the keys leading to it (nothing where the pattern leads nowhere or to no string; a last
 * step "{key}" visits the member names of the object there, each with its own path). The keys
 * are one stack, valid during the call only (pushed and popped, so empty again after it). Every
 * registration walks some fifty patterns, most of them to nothing: the walk allocates nothing
 * per step (a list of candidates per step, a key list copied per candidate and a getter object
 * per string cost more than the rest of a card's validation).
 */
function visitStringsAt(value: unknown, steps: readonly string[], depth: number, keys: (string | number)[], visit: (value: string, keys: Keys) => void): void {
  if (depth === steps.length) {
    if (typeof value === 'string') visit(value, keys);
    return;
  }
  const step = steps[depth]!;
  if (step === '*') {
    if (!Array.isArray(value)) return;
    for (let i = 0; i < value.length; i++) {
      keys.push(i);
      visitStringsAt(value[i], steps, depth + 1, keys, visit);
      keys.pop();
    }
  } else if (step === '{}') {
    if (!isObject(value)) return;
    for (const key of Object.keys(value)) {
      keys.push(key);
      visitStringsAt(value[key], steps, depth + 1, keys, visit);
      keys.pop();
    }
  } else if (step === '{key}') {
    if (!isObject(value) || depth !== steps.length - 1) return;
    for (const key of Object.keys(value)) {
      keys.push(key);
      visit(key, keys);
      keys.pop();
    }
  } else if (isObject(value) && Object.hasOwn(value, step)) {
    keys.push(step);
    visitStringsAt(value[step], steps, depth + 1, keys, visit);
    keys.pop();
  }
}
