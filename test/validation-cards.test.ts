/** Agent card validation: versions, size, mixed generations, hints for real-world mistakes, warnings. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import type { Finding } from '../src/contract/types.js';
import { compactJsonBytes, createDocumentValidator, MAX_FINDINGS, type Verdict } from '../src/validation/index.js';

const validator = createDocumentValidator({ maxDocumentBytes: 10_240 });
const strictHttp = createDocumentValidator({ maxDocumentBytes: 10_240, warnInsecureHttp: true });

type Json = Record<string, unknown>;

function v10(): Json {
  return {
    name: 'Invoice Agent',
    description: 'Extracts and translates supplier invoices.',
    version: '1.2.0',
    supportedInterfaces: [{ url: 'https://invoices.acme-corp.io/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    provider: { organization: 'ACME', url: 'https://acme-corp.io' },
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
      oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://auth.acme-corp.io/token', scopes: {} } } } },
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [
      {
        id: 'translate-invoice',
        name: 'Translate invoice',
        description: 'Translates an invoice, keeping amounts and tax lines.',
        tags: ['finance', 'translation'],
        examples: ['Translate this invoice into German'],
      },
    ],
  };
}

function v03(): Json {
  return {
    name: 'Weather Agent',
    description: 'Weather forecasts for any city.',
    version: '0.9.1',
    protocolVersion: '0.3.0',
    url: 'https://weather.acme-corp.io/a2a',
    preferredTransport: 'JSONRPC',
    capabilities: { streaming: false, stateTransitionHistory: true },
    securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
    security: [{ key: [] }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'forecast', name: 'Forecast', description: 'Forecast for a city.', tags: ['weather'], examples: ['Weather in Rome tomorrow?'] }],
  };
}

const check = (card: unknown, v = validator): Verdict => v.validateAgentCard(card, compactJsonBytes(card));
const find = (list: Finding[], path: string, rule?: string): Finding | undefined =>
  list.find((f) => f.path === path && (rule === undefined || f.rule === rule));
function mustFind(list: Finding[], path: string, rule?: string): Finding {
  const f = find(list, path, rule);
  assert.ok(f, `expected a finding at ${path}${rule ? ` (${rule})` : ''}; got ${JSON.stringify(list.map((x) => [x.path, x.rule]))}`);
  return f;
}

function assertVerdictShape(v: Verdict): void {
  assert.equal(v.valid, v.errorCode === undefined);
  assert.equal(v.valid, v.message === undefined);
  if (!v.valid) {
    assert.ok(v.errors.length > 0);
    assert.ok(!v.message!.includes('\n'), 'message is one line');
  }
  for (const f of [...v.errors, ...v.warnings]) {
    assert.ok(f.path === '' || f.path.startsWith('/'), `JSON Pointer: ${f.path}`);
    assert.ok(f.message.length > 0);
    assert.ok(f.rule);
  }
}

// --- valid cards ---------------------------------------------------------------------------

test('a valid v1.0 card is accepted as 1.0 without warnings', () => {
  const v = check(v10());
  assertVerdictShape(v);
  assert.equal(v.valid, true, JSON.stringify(v.errors));
  assert.equal(v.kind, 'agent');
  assert.equal(v.generation, '1.0');
  assert.deepEqual(v.warnings, []);
});

test('a valid v0.3 card is accepted as 0.3 ("0.3", "0.3.0" and "0.3.12" all count)', () => {
  for (const pv of ['0.3', '0.3.0', '0.3.12']) {
    const v = check({ ...v03(), protocolVersion: pv });
    assertVerdictShape(v);
    assert.equal(v.valid, true, `${pv}: ${JSON.stringify(v.errors)}`);
    assert.equal(v.generation, '0.3');
    assert.deepEqual(v.warnings, []);
  }
});

test('unknown extra fields are allowed in both generations', () => {
  assert.equal(check({ ...v10(), 'x-vendor': { a: 1 }, category: 'Finance' }).valid, true);
  assert.equal(check({ ...v03(), 'x-vendor': true }).valid, true);
});

// --- size ----------------------------------------------------------------------------------

function cardOfCompactSize(target: number): Json {
  const card = v10();
  card.description = '';
  card.description = 'x'.repeat(target - compactJsonBytes(card));
  assert.equal(compactJsonBytes(card), target);
  return card;
}

test('size limit: 10,240 bytes pass, 10,241 bytes are TOO_LARGE with measured size and limit', () => {
  const atLimit = cardOfCompactSize(10_240);
  assert.equal(check(atLimit).valid, true);
  const over = cardOfCompactSize(10_241);
  const v = check(over);
  assertVerdictShape(v);
  assert.equal(v.errorCode, 'TOO_LARGE');
  assert.equal(v.sizeBytes, 10_241);
  assert.match(v.message!, /10,241 bytes/);
  assert.match(v.message!, /10,240 bytes/);
  assert.equal(v.generation, undefined, 'nothing is looked at beyond the size');
});

test('size is checked first, on the caller-measured bytes (a pretty-printed file that fits minified says so)', () => {
  const card = v10();
  const v = validator.validateAgentCard(card, 20_000);
  assert.equal(v.errorCode, 'TOO_LARGE');
  assert.match(v.message!, /minified|Without whitespace/i);
  assert.equal(validator.validateAgentCard('not even a card', 10_241).errorCode, 'TOO_LARGE');
});

test('compactJsonBytes counts UTF-8 bytes of the compact serialisation', () => {
  assert.equal(compactJsonBytes({ a: 'é' }), Buffer.byteLength('{"a":"é"}'));
  assert.equal(compactJsonBytes({ a: '日本' }), 14);
  assert.equal(compactJsonBytes(undefined), 0);
});

// --- shape and version detection -----------------------------------------------------------

test('a card that is not a JSON object is VALIDATION_FAILED', () => {
  for (const doc of [[], 'card', 42, null]) {
    const v = check(doc);
    assertVerdictShape(v);
    assert.equal(v.errorCode, 'VALIDATION_FAILED');
    assert.equal(v.errors[0]!.path, '');
  }
});

test('UNSUPPORTED_VERSION lists the accepted versions', () => {
  const cases: Array<[Json, string]> = [
    [{ ...v03(), protocolVersion: '0.4.0' }, '/protocolVersion'],
    [{ ...v03(), protocolVersion: '2.0' }, '/protocolVersion'],
    [{ ...v03(), protocolVersion: ' 0.3.0' }, '/protocolVersion'],
    [{ name: 'x' }, ''],
  ];
  for (const [card, path] of cases) {
    const v = check(card);
    assertVerdictShape(v);
    assert.equal(v.errorCode, 'UNSUPPORTED_VERSION', JSON.stringify(card.protocolVersion));
    assert.match(v.message!, /v1\.0/);
    assert.match(v.message!, /0\.3/);
    mustFind(v.errors, path, 'unsupported-version');
  }
});

test('hint: a v0.2 card (protocolVersion 0.2.x, or url without protocolVersion) gets a migration hint', () => {
  const explicit = check({ ...v03(), protocolVersion: '0.2.5' });
  assert.equal(explicit.errorCode, 'UNSUPPORTED_VERSION');
  assert.match(explicit.message!, /0\.2\.5/);
  assert.match(mustFind(explicit.errors, '/protocolVersion').hint!, /supportedInterfaces/);

  const { protocolVersion: _pv, ...implicit } = v03();
  const v = check(implicit);
  assert.equal(v.errorCode, 'UNSUPPORTED_VERSION');
  assert.match(v.message!, /v0\.2/);
  const hint = mustFind(v.errors, '', 'unsupported-version').hint!;
  assert.match(hint, /supportedInterfaces/);
  assert.match(hint, /"protocolVersion": "0\.3\.0"/);
});

test('hint: protocolVersion "1.0" without supportedInterfaces says how to write a v1.0 card', () => {
  const { supportedInterfaces: _si, ...rest } = v10();
  const v = check({ ...rest, protocolVersion: '1.0', url: 'https://a.acme-corp.io/a2a' });
  assert.equal(v.errorCode, 'UNSUPPORTED_VERSION');
  const f = mustFind(v.errors, '/protocolVersion', 'unsupported-version');
  assert.match(f.hint!, /Remove "protocolVersion" and "url"/);
  assert.match(f.hint!, /supportedInterfaces/);
  const numeric = check({ ...rest, protocolVersion: 1.0 });
  assert.match(numeric.message!, /must be a string/);
});

test('an unsupported card also lists what is wrong in both generations (missing tags, capabilities array)', () => {
  const { protocolVersion: _pv, ...card } = v03();
  card.capabilities = ['streaming'];
  card.skills = [{ id: 'a', name: 'A', description: 'd' }];
  const v = check(card);
  assert.equal(v.errorCode, 'UNSUPPORTED_VERSION');
  mustFind(v.errors, '/capabilities', 'type');
  mustFind(v.errors, '/skills/0/tags', 'required');
  assert.equal(find(v.errors, '/securitySchemes/key'), undefined, 'the v0.3 scheme shape depends on the chosen version: not reported');
});

// --- mixed generations ---------------------------------------------------------------------

test('a card that passes both the official v0.3 schema and the v1.0 model is rejected as mixed', () => {
  const mixed: Json = {
    ...v10(),
    protocolVersion: '0.3.0',
    url: 'https://invoices.acme-corp.io/a2a',
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: 'https://invoices.acme-corp.io/a2a', transport: 'JSONRPC' }],
  };
  delete mixed.securitySchemes; // v1.0 scheme shapes would not pass the v0.3 schema
  delete mixed.securityRequirements;

  // It passes the official v0.3 schema...
  const official: unknown = JSON.parse(readFileSync(new URL('./fixtures/reference/a2a-v0.3.0.schema.json', import.meta.url), 'utf8'));
  const ajv = new Ajv({ strict: false });
  ajv.addSchema(official as object, 'a2a');
  assert.equal(ajv.getSchema('a2a#/definitions/AgentCard')!(mixed), true);
  // ...and, without its v0.3 fields, it is a valid v1.0 card.
  const { protocolVersion: _a, url: _b, preferredTransport: _c, additionalInterfaces: _d, ...pure } = mixed;
  assert.equal(check(pure).valid, true);

  const v = check(mixed);
  assertVerdictShape(v);
  assert.equal(v.generation, '1.0', 'supportedInterfaces decides');
  assert.equal(v.errorCode, 'VALIDATION_FAILED');
  for (const field of ['protocolVersion', 'url', 'preferredTransport', 'additionalInterfaces']) {
    assert.ok(mustFind(v.errors, `/${field}`, 'mixed-generation').hint);
    assert.match(v.message!, new RegExp(`"${field}"`));
  }
  assert.match(v.message!, /mixes A2A generations/);
  assert.equal(v.errors.length, 4, 'nothing else is wrong');
});

test('hint: protocolVersion at the top of a v1.0 card, and an interface without protocolVersion', () => {
  const card = v10();
  card.protocolVersion = '1.0';
  card.supportedInterfaces = [{ url: 'https://a.acme-corp.io/a2a', protocolBinding: 'JSONRPC' }];
  const v = check(card);
  assert.match(mustFind(v.errors, '/protocolVersion', 'mixed-generation').hint!, /supportedInterfaces entry/);
  assert.match(mustFind(v.errors, '/supportedInterfaces/0/protocolVersion', 'required').hint!, /move the top-level "protocolVersion"/);
});

test('v0.3 security and supportsAuthenticatedExtendedCard in a v1.0 card name their v1.0 replacements', () => {
  const v = check({ ...v10(), security: [{ bearer: [] }], supportsAuthenticatedExtendedCard: true });
  assert.match(mustFind(v.errors, '/security', 'mixed-generation').hint!, /securityRequirements/);
  assert.match(mustFind(v.errors, '/supportsAuthenticatedExtendedCard', 'mixed-generation').hint!, /extendedAgentCard/);
});

test("the A2A v1.0.1 specification's sample card (8.5), whose \"security\" is the v0.3 form, is told the securityRequirements to write, which then pass", () => {
  // a2a.proto v1.0 has no AgentCard "security" (field 9 is security_requirements, each a
  // SecurityRequirement {schemes: map<string, StringList>}): the sample mixes generations.
  const sample = {
    ...v10(),
    securitySchemes: { google: { openIdConnectSecurityScheme: { openIdConnectUrl: 'https://accounts.google.com/.well-known/openid-configuration' } } },
    security: [{ google: ['openid', 'profile', 'email'] }],
  };
  const v = check(sample);
  assert.equal(v.valid, false);
  const written = '"securityRequirements": [{"schemes":{"google":{"list":["openid","profile","email"]}}}]';
  assert.ok(mustFind(v.errors, '/security', 'mixed-generation').hint!.includes(written), 'the hint writes the replacement out');
  assert.ok(v.message!.includes(written), 'so does the message');
  const { security: _security, ...rest } = sample;
  assert.equal(check({ ...rest, ...(JSON.parse(`{${written}}`) as Json) }).valid, true, 'and what it says to write is valid');
  // A shape it cannot rewrite keeps the general advice.
  assert.doesNotMatch(mustFind(check({ ...sample, security: ['google'] }).errors, '/security', 'mixed-generation').hint!, /here:/);
});

test('a bidirectional control in an interface URL is refused: "https://a.acme-corp.io/\\u202Egnp.a2a" shows another URL than it is', () => {
  const card = v10();
  (card.supportedInterfaces as Json[])[0]!.url = 'https://a.acme-corp.io/\u202Egnp.a2a';
  assert.match(mustFind(check(card).errors, '/supportedInterfaces/0/url', 'control-character').message, /bidirectional control U\+202E at position 23/);
});

test('a control character in what a client reads to authenticate (an OIDC or token URL, an API key header name) is refused, in both generations', () => {
  const v1 = {
    ...v10(),
    securitySchemes: {
      oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: 'https://id.acme-corp.io/.well-known/openid-configuration\r\n' } },
      key: { apiKeySecurityScheme: { location: 'header', name: 'X-Key\r\nX-Forwarded-For: 10.0.0.1' } },
      oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://id.acme-corp.io/to\u0000ken', scopes: { read: 'Read' } } } } },
    },
  };
  const errors = check(v1).errors;
  mustFind(errors, '/securitySchemes/oidc/openIdConnectSecurityScheme/openIdConnectUrl', 'control-character');
  mustFind(errors, '/securitySchemes/key/apiKeySecurityScheme/name', 'control-character');
  mustFind(errors, '/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/tokenUrl', 'control-character');
  const v03Card = { ...v03(), securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key\n' } } };
  mustFind(check(v03Card).errors, '/securitySchemes/key/name', 'control-character');
});

test('a blank value is refused where the schema refuses an empty one (version, skill id), and treated as empty where it is optional (tenant, a mode, documentationUrl)', () => {
  for (const [path, set] of [['/version', (c: Json) => (c.version = ' ')], ['/skills/0/id', (c: Json) => ((c.skills as Json[])[0]!.id = '  ')]] as const) {
    const card = v10();
    set(card);
    mustFind(check(card).errors, path, 'blank-value');
  }
  for (const value of ['', ' ']) {
    const card: Json = { ...v10(), documentationUrl: value, defaultInputModes: [value] };
    (card.supportedInterfaces as Json[])[0]!.tenant = value;
    const v = check(card);
    assert.equal(v.valid, true, `${JSON.stringify(value)}: ${JSON.stringify(v.errors)}`);
  }
});

test('an empty or blank tag or example is a warning: it shows as nothing and no tags filter can ask for it', () => {
  const card = v10();
  const skill = (card.skills as Json[])[0]!;
  skill.tags = ['finance', '', '  '];
  skill.examples = ['\u200b'];
  const v = check(card);
  assert.equal(v.valid, true);
  assert.equal(mustFind(v.warnings, '/skills/0/tags/1', 'blank-text').message, 'the tag is empty');
  assert.match(mustFind(v.warnings, '/skills/0/tags/2', 'blank-text').hint!, /Remove it, or write the tag/);
  assert.match(mustFind(v.warnings, '/skills/0/examples/0', 'blank-text').message, /invisible characters .*U\+200B/);
  assert.equal(find(v.warnings, '/skills/0/tags/0'), undefined);
});

test('display-text findings name the pointer of each string found, in document order, across skills and escaped scheme names', () => {
  const card = v10();
  const skill = (card.skills as Json[])[0]!;
  card.skills = [{ ...skill, name: 'Bad\u001bname' }, { ...skill, id: 'second', tags: ['ok', 'right\u202Eleft'], examples: ['fine', ''] }];
  card.securitySchemes = { 'a/b~c': { apiKeySecurityScheme: { location: 'header', name: 'X-Key\n' } } };
  card.securityRequirements = [{ schemes: { 'a/b~c': { list: [] } } }];
  const v = check(card);
  assert.deepEqual(
    v.errors.map((e) => `${e.path} ${e.rule}`),
    ['/skills/0/name control-character', '/securitySchemes/a~1b~0c/apiKeySecurityScheme/name control-character'],
  );
  assert.deepEqual(
    v.warnings.filter((w) => w.rule === 'bidi-control' || w.rule === 'blank-text').map((w) => `${w.path} ${w.rule}`),
    ['/skills/1/tags/1 bidi-control', '/skills/1/examples/1 blank-text'],
  );
});

test('what the web page shows of extensions and security is checked as names and texts: scheme, scope and requirement names, their descriptions', () => {
  const card = v10();
  card.capabilities = { streaming: true, extensions: [{ uri: 'https://ext.acme-corp.io/v1', description: 'ext \u202Eevil\u202C \u0007' }] };
  card.securitySchemes = {
    key: { apiKeySecurityScheme: { location: 'header', name: 'X-Key', description: 'Send \u202Eyek-ipa\u202C here \u001b[2J' } },
    bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT\u001b[31m' } },
    oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://auth.acme-corp.io/token', scopes: { 'read\u202E': 'Read \u202Eall', write: 'Write\u0000' } } } } },
    'admin\u202E': { mtlsSecurityScheme: {} },
  };
  card.securityRequirements = [{ schemes: { oauth: { list: ['write\n'] } } }];
  const v = check(card);
  assert.deepEqual(
    v.errors.map((e) => `${e.path} ${e.rule}`).sort(),
    [
      '/capabilities/extensions/0/description control-character',
      '/securityRequirements/0/schemes/oauth/list/0 control-character',
      '/securitySchemes/admin\u202E bidi-control',
      '/securitySchemes/bearer/httpAuthSecurityScheme/bearerFormat control-character',
      '/securitySchemes/key/apiKeySecurityScheme/description control-character',
      '/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/scopes/read\u202E bidi-control',
      '/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/scopes/write control-character',
    ].sort(),
  );
  for (const path of ['/capabilities/extensions/0/description', '/securitySchemes/key/apiKeySecurityScheme/description', '/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/scopes/read\u202E']) {
    mustFind(v.warnings, path, 'bidi-control');
  }
  // v0.3: the schemes are not nested in their kind's member, the requirements name scopes directly.
  const old = v03();
  old.securitySchemes = { oauth: { type: 'oauth2', description: 'OAuth \u001b', flows: { clientCredentials: { tokenUrl: 'https://auth.acme-corp.io/token', scopes: { 'read\u2066': 'Read' } } } } };
  old.security = [{ oauth: ['read\u2066'] }];
  assert.deepEqual(
    check(old).errors.map((e) => `${e.path} ${e.rule}`).sort(),
    ['/security/0/oauth/0 bidi-control', '/securitySchemes/oauth/description control-character', '/securitySchemes/oauth/flows/clientCredentials/scopes/read\u2066 bidi-control'],
  );
});

test('a message quoting a value escapes what would act in it: a bidirectional control reordered the rest of the refusal', () => {
  const card = v10();
  (card.supportedInterfaces as Json[])[0]!.url = 'https://a.acme\u202E-corp.io/a2a';
  const v = check(card);
  const error = mustFind(v.errors, '/supportedInterfaces/0/url', 'invalid-url');
  assert.ok(error.message.includes('"https://a.acme\\u202e-corp.io/a2a"'), error.message);
  assert.ok(!/[\u202a-\u202e]/.test(error.message + v.message), 'no bidirectional control in the message');
  (card.supportedInterfaces as Json[])[0]!.protocolBinding = 'JSONRPC\u0085';
  assert.ok(!/[\u0080-\u009f]/.test(check(card).message!), 'nor a C1 control');
});

// --- v1.0 model: required, non-empty, unions -------------------------------------------------

test('v1.0: every REQUIRED field of the proto is required, and REQUIRED lists must not be empty', () => {
  for (const field of ['name', 'description', 'version', 'capabilities', 'defaultInputModes', 'defaultOutputModes', 'skills']) {
    const card = v10();
    delete card[field];
    const v = check(card);
    assert.equal(v.errorCode, 'VALIDATION_FAILED', field);
    mustFind(v.errors, `/${field}`, 'required');
  }
  for (const field of ['supportedInterfaces', 'defaultInputModes', 'defaultOutputModes', 'skills']) {
    const v = check({ ...v10(), [field]: [] });
    mustFind(v.errors, `/${field}`, 'min-items');
  }
  const card = v10();
  card.provider = { organization: 'ACME' };
  mustFind(check(card).errors, '/provider/url', 'required');
  card.provider = { organization: 'ACME', url: 'https://acme-corp.io' };
  card.signatures = [{ protected: 'eyJ' }];
  mustFind(check(card).errors, '/signatures/0/signature', 'required');
});

test('hint: a missing tags list points at the missing member itself', () => {
  const card = v10();
  card.skills = [{ id: 'a', name: 'A', description: 'd', examples: ['x'] }];
  const v = check(card);
  const f = mustFind(v.errors, '/skills/0/tags', 'required');
  assert.match(f.hint!, /"tags"/);
  const empty = v10();
  (empty.skills as Json[])[0]!.tags = [];
  assert.match(mustFind(check(empty).errors, '/skills/0/tags', 'min-items').hint!, /at least one keyword/);
});

test('hint: capabilities given as an array', () => {
  for (const base of [v10(), v03()]) {
    const v = check({ ...base, capabilities: [{ name: 'streaming' }] });
    const f = mustFind(v.errors, '/capabilities', 'type');
    assert.match(f.message, /must be an object, found an array/);
    assert.match(f.hint!, /object of optional flags/);
  }
});

test('hint: skills given as strings', () => {
  const v = check({ ...v10(), skills: ['Translate invoices'] });
  const f = mustFind(v.errors, '/skills/0', 'type');
  assert.match(f.hint!, /"id": "translate-invoices", "name": "Translate invoices"/);
});

test('hint: transport or type instead of protocolBinding', () => {
  for (const key of ['transport', 'type']) {
    const card = v10();
    card.supportedInterfaces = [{ url: 'https://a.acme-corp.io/a2a', [key]: 'jsonrpc', protocolVersion: '1.0' }];
    const f = mustFind(check(card).errors, '/supportedInterfaces/0/protocolBinding', 'required');
    assert.match(f.message, new RegExp(`"${key}" instead`));
    assert.match(f.hint!, new RegExp(`Rename "${key}" to "protocolBinding"`));
  }
});

test('hint: skill examples given as objects', () => {
  const card = v03();
  (card.skills as Json[])[0]!.examples = [{ input: 'x', output: 'y' }];
  const v = check(card);
  assert.equal(v.generation, '0.3');
  assert.match(mustFind(v.errors, '/skills/0/examples/0', 'type').hint!, /plain strings/);
});

test('hint: a v0.3-style security scheme in a v1.0 card; one-of noise is collapsed into one finding', () => {
  const card = v10();
  card.securitySchemes = { bearer: { type: 'http', scheme: 'bearer' } };
  const v = check(card);
  const f = mustFind(v.errors, '/securitySchemes/bearer', 'one-of');
  assert.match(f.message, /exactly one of "apiKeySecurityScheme"/);
  assert.match(f.hint!, /"httpAuthSecurityScheme"/);
  assert.equal(v.errors.filter((e) => e.path.startsWith('/securitySchemes/bearer')).length, 1, 'no per-branch required errors');
});

test('v1.0 unions: two scheme members, two OAuth flows, apiKey "in" instead of "location"', () => {
  const card = v10();
  card.securitySchemes = {
    both: { httpAuthSecurityScheme: { scheme: 'Bearer' }, mtlsSecurityScheme: {} },
    oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://t.acme-corp.io', scopes: {} }, deviceCode: { deviceAuthorizationUrl: 'https://d.acme-corp.io', tokenUrl: 'https://t.acme-corp.io', scopes: {} } } } },
    key: { apiKeySecurityScheme: { in: 'header', name: 'X-Key' } },
  };
  const v = check(card);
  assert.match(mustFind(v.errors, '/securitySchemes/both', 'one-of').message, /has "httpAuthSecurityScheme" and "mtlsSecurityScheme"/);
  assert.match(mustFind(v.errors, '/securitySchemes/oauth/oauth2SecurityScheme/flows', 'one-of').hint!, /one flow per security scheme/);
  assert.match(mustFind(v.errors, '/securitySchemes/key/apiKeySecurityScheme/location', 'required').hint!, /renamed "in" to "location"/);
});

test('v0.3 security schemes report the errors of their own type only', () => {
  const card = v03();
  card.securitySchemes = { key: { type: 'apiKey', name: 'X-Key' }, odd: { type: 'basic' }, v1: { httpAuthSecurityScheme: { scheme: 'Bearer' } } };
  const v = check(card);
  mustFind(v.errors, '/securitySchemes/key/in', 'required');
  assert.equal(v.errors.filter((e) => e.path.startsWith('/securitySchemes/key')).length, 1);
  mustFind(v.errors, '/securitySchemes/odd/type', 'enum');
  assert.match(mustFind(v.errors, '/securitySchemes/v1/type', 'required').hint!, /v1\.0 form/);
});

test('security requirements must name declared schemes (card and skill level, both generations)', () => {
  const card = v10();
  card.securityRequirements = [{ schemes: { bearer: { list: [] } } }, { schemes: { oauth2: { list: ['read'] } } }];
  (card.skills as Json[])[0]!.securityRequirements = [{ schemes: { apiKey: { list: [] } } }];
  let v = check(card);
  assert.equal(v.valid, false);
  assert.equal(v.errors.length, 2, JSON.stringify(v.errors));
  const card0 = mustFind(v.errors, '/securityRequirements/1/schemes/oauth2', 'undeclared-security-scheme');
  assert.match(card0.message, /"oauth2" is not declared in "securitySchemes"/);
  assert.match(card0.hint!, /declared scheme \("bearer", "oauth"\)/);
  mustFind(v.errors, '/skills/0/securityRequirements/0/schemes/apiKey', 'undeclared-security-scheme');

  const old = v03();
  old.security = [{ key: [] }, { oauth: ['read'] }];
  delete old.securitySchemes;
  v = check(old);
  assert.equal(v.valid, false);
  const f = mustFind(v.errors, '/security/0/key', 'undeclared-security-scheme');
  assert.match(f.hint!, /declares no security schemes.*"type": "http"/);
  mustFind(v.errors, '/security/1/oauth', 'undeclared-security-scheme');
  // Declared names, and an empty requirement (no authentication needed), pass.
  assert.equal(check({ ...v10(), securityRequirements: [{}, { schemes: { bearer: { list: [] } } }] }).valid, true);
  assert.equal(check({ ...v03(), security: [{}, { key: [] }] }).valid, true);
});

test('a requirement in the other generation\'s form is an error that shows the right form (v1.0 would read {"bearer": []} as no credentials)', () => {
  let v = check({ ...v10(), securityRequirements: [{ bearer: ['invoices:read'] }] });
  assert.equal(v.valid, false);
  let f = mustFind(v.errors, '/securityRequirements/0', 'v03-security-requirement');
  assert.match(f.message, /"bearer" without "schemes"/);
  assert.equal(f.hint, 'Write it as {"schemes": {"bearer": {"list": ["invoices:read"]}}}.');
  const card = v10();
  (card.skills as Json[])[0]!.securityRequirements = [{ schemes: { bearer: ['invoices:read'] } }];
  v = check(card);
  f = mustFind(v.errors, '/skills/0/securityRequirements/0/schemes/bearer', 'type');
  assert.match(f.hint!, /\{"list": \["invoices:read"\]\}/);
  v = check({ ...v03(), security: [{ schemes: { key: { list: [] } } }] });
  f = mustFind(v.errors, '/security/0/schemes', 'type');
  assert.equal(v.errors.length, 1, JSON.stringify(v.errors));
  assert.match(f.hint!, /v1\.0 form.*\{"key": \[\]\}/);
});

test('hints say what to write: enum values in the wrong case, quoted booleans, numbers for strings, missing fields described', () => {
  const cases: Array<[string, (c: Json) => void, string, RegExp, () => Json]> = [
    ['apiKey location in capitals', (c) => (c.securitySchemes = { bearer: { apiKeySecurityScheme: { location: 'HEADER', name: 'X-Key' } } }), '/securitySchemes/bearer/apiKeySecurityScheme/location', /Did you mean "header"\? The values are case-sensitive/, v10],
    ['v0.3 scheme type in lower case', (c) => ((c.securitySchemes as Json).key = { type: 'apikey', in: 'header', name: 'X' }), '/securitySchemes/key/type', /Did you mean "apiKey"\?/, v03],
    ['quoted boolean', (c) => ((c.capabilities as Json).streaming = 'true'), '/capabilities/streaming', /^Write true without quotes\.$/, v10],
    ['a number for a string', (c) => (c.version = 2), '/version', /Put the value in quotes: "2"/, v10],
    ['an object for a list', (c) => (c.skills = { id: 'a' }), '/skills', /array/, v10],
    ['missing provider url', (c) => (c.provider = { organization: 'ACME' }), '/provider/url', /^Add "url" \(.+\)\.$/, v10],
  ];
  for (const [what, change, path, hint, base] of cases) {
    const card = base();
    change(card);
    const v = check(card);
    assert.equal(v.valid, false, what);
    assert.match(mustFind(v.errors, path).hint ?? '(none)', hint, what);
    assert.ok(v.message!.includes(mustFind(v.errors, path).hint!), `${what}: the one-line message carries the first hint`);
  }
});

test('a required description of only white space is refused like an empty one (card and skill)', () => {
  const card = v10();
  card.description = ' \n\t ';
  (card.skills as Json[])[0]!.description = '   ';
  const v = check(card);
  assert.equal(v.valid, false);
  assert.equal(mustFind(v.errors, '/description', 'blank-text').message, 'is only white space');
  mustFind(v.errors, '/skills/0/description', 'blank-text');
  assert.equal(v.errors.length, 2, JSON.stringify(v.errors));
  // Optional running text (an example) may be anything.
  assert.equal(check({ ...v10(), skills: [{ ...(v10().skills as Json[])[0]!, examples: [' '] }] }).valid, true);
});

test('names of Object.prototype members ("constructor", "toString") in the document are not taken for known values in hints', () => {
  const card = v10();
  card.defaultInputModes = ['constructor'];
  card.securitySchemes = { x: { type: 'constructor' } };
  const v = check(card);
  assert.match(mustFind(v.warnings, '/defaultInputModes/0', 'invalid-media-type').hint!, /^Use a media type such as/);
  assert.match(mustFind(v.errors, '/securitySchemes/x', 'one-of').hint!, /^Use one of "apiKeySecurityScheme"/);
  const old = check({ ...v03(), securitySchemes: { x: { toString: 'http' } }, security: [] });
  assert.match(mustFind(old.errors, '/securitySchemes/x/type', 'required').hint!, /^v0\.3 security schemes have "type"/);
  for (const f of [...v.errors, ...v.warnings, ...old.errors]) assert.doesNotMatch(f.hint ?? '', /function|native code|undefined/, f.path);
});

test('errors are bounded to the first 50', () => {
  const big = createDocumentValidator({ maxDocumentBytes: 1_000_000 });
  const card = v10();
  card.skills = Array.from({ length: 120 }, (_, i) => ({ id: `s${i}`, name: 'S', description: 'd' }));
  const v = check(card, big);
  assert.equal(v.errors.length, MAX_FINDINGS);
  assert.match(v.message!, /50 or more errors/);
});

// --- warnings ------------------------------------------------------------------------------

test('warning: placeholder-looking URLs (YOUR-..., example.com) and templates outside the endpoints do not block registration', () => {
  const card = v10();
  card.supportedInterfaces = [
    { url: 'https://YOUR-DOMAIN.com/a2a', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    { url: 'https://agent.example.com/a2a', protocolBinding: 'GRPC', protocolVersion: '1.0' },
    { url: 'https://your-agent.acme.dev/a2a', protocolBinding: 'GRPC', protocolVersion: '0.3' },
  ];
  card.documentationUrl = 'https://<your-host>/docs';
  const v = check(card);
  assert.equal(v.valid, true);
  for (let i = 0; i < 3; i++) mustFind(v.warnings, `/supportedInterfaces/${i}/url`, 'placeholder-url');
  mustFind(v.warnings, '/documentationUrl', 'placeholder-url');
  assert.equal(find(v.warnings, '/provider/url'), undefined, 'a real URL is not flagged');
});

test('error: an endpoint URL that is an unfilled template ({BASE_URL}, <host>, ${HOST}) or a placeholder that is no URL', () => {
  const templates = ['{BASE_URL}/a2a', 'https://{HOST}/a2a', 'https://<your-host>/a2a', '${AGENT_URL}', 'https://agent.acme-corp.io/{{tenant}}/a2a', 'YOUR_AGENT_URL'];
  const card = v10();
  card.supportedInterfaces = [
    { url: 'https://agent.acme-corp.io/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ...templates.map((url) => ({ url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' })),
  ];
  const v = check(card);
  assert.equal(v.valid, false);
  const markers = ['{BASE_URL}', '{HOST}', '<your-host>', '${AGENT_URL}', '{{tenant}}'];
  markers.forEach((marker, i) => {
    const e = mustFind(v.errors, `/supportedInterfaces/${i + 1}/url`, 'url-placeholder');
    assert.equal(e.message, `${JSON.stringify(templates[i])} is a template, not a URL: ${JSON.stringify(marker)} was never filled in`);
    assert.match(e.hint!, new RegExp(`^Replace ${JSON.stringify(marker).replace(/[${}]/g, '\\$&')} with the public address clients reach the agent at`));
  });
  assert.match(mustFind(v.errors, '/supportedInterfaces/6/url', 'url-placeholder').message, /"YOUR_AGENT_URL" is a placeholder, not a URL/);
  assert.equal(find(v.warnings, '/supportedInterfaces/1/url'), undefined, 'an error, not a warning as well');
  const old = v03();
  old.url = '{BASE_URL}';
  mustFind(check(old).errors, '/url', 'url-placeholder');
});

test('warning: localhost and loopback URLs; plain http only when warnInsecureHttp', () => {
  const card = v10();
  card.supportedInterfaces = [
    { url: 'http://localhost:3000/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'http://127.0.0.1:8080', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'http://agent.acme-corp.io/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
  ];
  const relaxed = check(card);
  assert.equal(relaxed.valid, true);
  mustFind(relaxed.warnings, '/supportedInterfaces/0/url', 'loopback-url');
  mustFind(relaxed.warnings, '/supportedInterfaces/1/url', 'loopback-url');
  assert.equal(find(relaxed.warnings, '/supportedInterfaces/2/url'), undefined);
  const strict = check(card, strictHttp);
  mustFind(strict.warnings, '/supportedInterfaces/2/url', 'insecure-url');
});

test('a message quoting text in any script cuts it between characters, never inside an emoji (no lone surrogate, no "\\ud83c")', () => {
  const card = v10();
  // Odd offsets: a cut by UTF-16 units landed between the two halves of an emoji.
  card.documentationUrl = `javascript:alert(${'🌤'.repeat(80)})`;
  const id = `x${'天气🌤'.repeat(20)}`;
  card.skills = [
    { id, name: 'A', description: 'a', tags: ['a'] },
    { id, name: 'B', description: 'b', tags: ['b'] },
  ];
  const v = check(card);
  const unsafe = mustFind(v.warnings, '/documentationUrl', 'unsafe-url').message;
  const duplicate = mustFind(v.warnings, '/skills/1/id', 'duplicate-skill-id').message;
  for (const message of [unsafe, duplicate]) {
    assert.doesNotMatch(message, /\\u[dD][89abAB]|[\uD800-\uDFFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u, message);
    assert.match(message, /🌤…/u, message);
  }
  assert.match(unsafe, /^"javascript:alert\(🌤🌤/u);
  assert.match(duplicate, /skill id "x天气🌤天气🌤/u);
});

test('warning: URLs that run script or read local files (javascript:, data:, file:) are no links', () => {
  const card = v10();
  card.documentationUrl = 'javascript:alert(document.cookie)';
  card.iconUrl = 'data:image/svg+xml,<svg onload=alert(1)>';
  card.provider = { organization: 'Acme', url: 'file:///etc/passwd' };
  const v = check(card);
  assert.equal(v.valid, true);
  assert.match(mustFind(v.warnings, '/documentationUrl', 'unsafe-url').message, /"javascript:alert\(document\.cookie\)" is a javascript: URL/);
  mustFind(v.warnings, '/provider/url', 'unsafe-url');
  // Braces and angle brackets do not make a script a placeholder: the scheme is what is wrong (one warning per URL).
  mustFind(v.warnings, '/iconUrl', 'unsafe-url');
  assert.equal(v.warnings.filter((w) => w.path === '/iconUrl').length, 1);
  card.iconUrl = 'data:image/png;base64,iVBORw0KGgo=';
  mustFind(check(card).warnings, '/iconUrl', 'unsafe-url');
  card.documentationUrl = "javascript:fetch('//x').then(r=>r.text())//{x}";
  card.provider = { organization: 'Acme', url: 'data:text/html,<script>alert(1)</script>' };
  const bracketed = check(card);
  assert.match(mustFind(bracketed.warnings, '/documentationUrl', 'unsafe-url').message, /is a javascript: URL/);
  assert.match(mustFind(bracketed.warnings, '/provider/url', 'unsafe-url').message, /is a data: URL/);
  // A template that is no URL, or one that is http(s), is still a placeholder.
  card.documentationUrl = '{DOCS_URL}';
  card.provider = { organization: 'Acme', url: 'https://acme-corp.io/<page>' };
  mustFind(check(card).warnings, '/documentationUrl', 'placeholder-url');
  mustFind(check(card).warnings, '/provider/url', 'placeholder-url');
});

test('warning: a link with a user name or password (documentationUrl, iconUrl, provider url, OAuth URLs) leads elsewhere than it reads, and publishes the password', () => {
  const card = v10();
  card.documentationUrl = 'https://trusted.com@evil.net/docs';
  card.iconUrl = 'https://cdn.acme-corp.io:secret@evil.net/icon.png';
  card.provider = { organization: 'Acme', url: 'https://user:pw@acme-corp.io/' };
  card.securitySchemes = { oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://admin:hunter2@auth.acme-corp.io/token', scopes: {} } } } } };
  card.securityRequirements = [{ schemes: { oauth: { list: [] } } }];
  const v = check(card);
  assert.equal(v.valid, true, JSON.stringify(v.errors));
  const docs = mustFind(v.warnings, '/documentationUrl', 'credentials-url');
  assert.match(docs.message, /^"https:\/\/trusted\.com@evil\.net\/docs" has a user name or password before its host: a link to it leads to "evil\.net"/);
  assert.match(docs.hint!, /Remove the part before the "@" \(use "https:\/\/evil\.net\/…"\)/);
  mustFind(v.warnings, '/iconUrl', 'credentials-url');
  mustFind(v.warnings, '/provider/url', 'credentials-url');
  mustFind(v.warnings, '/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/tokenUrl', 'credentials-url');
  // The password is not repeated in the finding; the user name, which may be the disguise, is.
  const said = JSON.stringify(v.warnings);
  for (const secret of ['secret', ':pw@', 'hunter2']) assert.ok(!said.includes(secret), `${secret} in ${said}`);
  assert.match(mustFind(v.warnings, '/provider/url', 'credentials-url').message, /"https:\/\/user:\*\*\*@acme-corp\.io\/"/);
  // An interface URL with credentials stays refused (url-credentials), not also warned about.
  (card.supportedInterfaces as Json[])[0]!.url = 'https://user:pw@invoices.acme-corp.io/a2a';
  const refused = check(card);
  mustFind(refused.errors, '/supportedInterfaces/0/url', 'url-credentials');
  assert.equal(find(refused.warnings, '/supportedInterfaces/0/url'), undefined);
});

test('warning: skills without examples, duplicate skill ids', () => {
  const card = v10();
  card.skills = [
    { id: 'a', name: 'A', description: 'd', tags: ['t'] },
    { id: 'a', name: 'A2', description: 'd', tags: ['t'], examples: ['x'] },
  ];
  const v = check(card);
  assert.equal(v.valid, true);
  mustFind(v.warnings, '/skills/0/examples', 'skill-without-examples');
  assert.match(mustFind(v.warnings, '/skills/1/id', 'duplicate-skill-id').message, /\/skills\/0/);
});

test('warning: legacy authentication object, removed v0.3 capability, lower-case binding', () => {
  const card = v10();
  card.authentication = { schemes: ['bearer'] };
  card.capabilities = { streaming: true, stateTransitionHistory: false };
  card.supportedInterfaces = [{ url: 'https://a.acme-corp.io/a2a', protocolBinding: 'jsonrpc', protocolVersion: '1.0' }];
  const v = check(card);
  assert.equal(v.valid, true);
  mustFind(v.warnings, '/authentication', 'legacy-authentication');
  mustFind(v.warnings, '/capabilities/stateTransitionHistory', 'removed-field');
  assert.match(mustFind(v.warnings, '/supportedInterfaces/0/protocolBinding', 'unknown-protocol-binding').hint!, /"JSONRPC"/);
  const v3 = check({ ...v03(), authentication: { schemes: [] } });
  assert.equal(v3.valid, true);
  mustFind(v3.warnings, '/authentication', 'legacy-authentication');
});

test('warning: a v0.3 transport that is no core name (v0.3 clients match "JSONRPC" exactly)', () => {
  const v = check({ ...v03(), preferredTransport: 'jsonrpc', additionalInterfaces: [{ url: 'https://weather.acme-corp.io/rest', transport: 'REST' }, { url: 'https://weather.acme-corp.io/ws', transport: 'https://example.org/bindings/websocket/v1' }] });
  assert.equal(v.valid, true);
  assert.match(mustFind(v.warnings, '/preferredTransport', 'unknown-protocol-binding').hint!, /Did you mean "JSONRPC"\?/);
  assert.match(mustFind(v.warnings, '/additionalInterfaces/0/transport', 'unknown-protocol-binding').hint!, /"HTTP\+JSON"/);
  assert.equal(find(v.warnings, '/additionalInterfaces/1/transport'), undefined, 'a URI names a custom binding');
});

test('warning: modes that are not media types ("text" for "text/plain"), in every card and skill list; media types with wildcards and parameters pass', () => {
  const card = v10();
  card.defaultInputModes = ['text', 'application/json', 'image/*', 'text/plain; charset=utf-8', '*/*'];
  card.defaultOutputModes = ['json'];
  (card.skills as Json[])[0]!.inputModes = ['PDF file'];
  (card.skills as Json[])[0]!.outputModes = ['text/markdown'];
  const v = check(card);
  assert.equal(v.valid, true);
  const modes = v.warnings.filter((w) => w.rule === 'invalid-media-type');
  assert.deepEqual(modes.map((w) => w.path), ['/defaultInputModes/0', '/defaultOutputModes/0', '/skills/0/inputModes/0']);
  assert.match(modes[0]!.message, /"text" is not a media type/);
  assert.match(modes[0]!.hint!, /Did you mean "text\/plain"\?.*filters/);
  assert.match(modes[1]!.hint!, /"application\/json"/);
  assert.match(modes[2]!.hint!, /Use a media type such as/);
  // Said also when the card is refused for its version: it holds whichever version comes next.
  const unversioned = check({ ...v03(), protocolVersion: undefined, defaultInputModes: ['text'] });
  assert.equal(unversioned.errorCode, 'UNSUPPORTED_VERSION');
  mustFind(unversioned.warnings, '/defaultInputModes/0', 'invalid-media-type');
});

test('warning: an interface protocolVersion that is no A2A version ("v1.0", "1", the agent\'s own "2.1.0"); custom bindings may version themselves', () => {
  const card = v10();
  const url = 'https://invoices.acme-corp.io/a2a';
  card.supportedInterfaces = [
    { url, protocolBinding: 'JSONRPC', protocolVersion: 'v1.0' },
    { url, protocolBinding: 'HTTP+JSON', protocolVersion: '1' },
    { url, protocolBinding: 'GRPC', protocolVersion: '2.1.0' },
    { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0.1' },
    { url: 'https://invoices.acme-corp.io/mcp', protocolBinding: 'https://modelcontextprotocol.io/transports#streamable-http', protocolVersion: '2025-11-25' },
  ];
  const v = check(card);
  assert.equal(v.valid, true);
  const found = v.warnings.filter((w) => w.rule === 'unknown-protocol-version');
  assert.deepEqual(found.map((w) => w.path), [0, 1, 2].map((i) => `/supportedInterfaces/${i}/protocolVersion`));
  assert.match(found[0]!.hint!, /^Did you mean "1\.0"\?/);
  assert.match(found[1]!.hint!, /^Did you mean "1\.0"\?/);
  assert.match(found[2]!.message, /"2\.1\.0" is not an A2A protocol version/);
  assert.match(found[2]!.hint!, /agent's own version goes in "version"/);
});

test('custom bindings given as URIs are not warned about', () => {
  const card = v10();
  card.supportedInterfaces = [{ url: 'wss://a.acme-corp.io/ws', protocolBinding: 'https://acme-corp.io/bindings/ws/v1', protocolVersion: '1.0' }];
  assert.deepEqual(check(card).warnings, []);
});

test('hostile nesting: sizes are still measured, and nothing overflows the stack', () => {
  let deep: unknown = 1;
  for (let i = 0; i < 200_000; i++) deep = [deep];
  // JSON.stringify cannot print this back; the measure must not throw.
  assert.equal(compactJsonBytes(deep), 400_001);
  const nested = { a: [{ b: 'é' }, null, true], c: { d: 1.5 } };
  let wrapped: unknown = nested;
  for (let i = 0; i < 200_000; i++) wrapped = { k: wrapped };
  assert.equal(compactJsonBytes(wrapped), 200_000 * ('{"k":'.length + 1) + compactJsonBytes(nested));
  const card = { ...v10(), name: deep, extensions: deep };
  const v = validator.validateAgentCard(card, 5_000);
  assert.equal(v.errorCode, 'VALIDATION_FAILED');
  mustFind(v.errors, '/name', 'type');
  assert.equal(validator.validateAgentCard(card, 500_000).errorCode, 'TOO_LARGE');
});

test('a number past a double\'s range (1e400, stored as null) is refused at its path; with the text at hand, as written', () => {
  const text = JSON.stringify(v10()).replace('"capabilities":{', '"capabilities":{"extensions":[{"uri":"https://ext.acme-corp.io/x","params":{"big":1e400,"neg":-1e400,"ok":1e300}}],');
  const card = JSON.parse(text) as Json;
  // From the value alone (a data part: the request was parsed already), the number as read.
  const parsed = check(card);
  assert.equal(parsed.errorCode, 'VALIDATION_FAILED');
  assert.equal(parsed.generation, '1.0');
  assert.deepEqual(
    parsed.errors.map((f) => [f.path, f.rule, f.message]),
    [
      ['/capabilities/extensions/0/params/big', 'number-out-of-range', 'this number is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string'],
      ['/capabilities/extensions/0/params/neg', 'number-out-of-range', 'this negative number is beyond the smallest number JSON here can hold (about -1.8e308): write a number nearer zero, or a string'],
    ],
  );
  assert.match(parsed.message!, /^The A2A v1\.0 agent card is not valid \(2 errors\)\. \/capabilities\/extensions\/0\/params\/big: this number is beyond/);
  // From the text (a file part, a fetched card, the CLI's file): the number as written.
  const written = validator.validateAgentCard(card, text.length, { text, at: '' });
  assert.deepEqual(
    written.errors.map((f) => f.message),
    [
      '1e400 is beyond the largest number JSON here can hold (about 1.8e308): write a smaller number or a string',
      '-1e400 is beyond the smallest number JSON here can hold (about -1.8e308): write a number nearer zero, or a string',
    ],
  );
  // 1e300 is a double: no finding, whether written so or as its digits.
  assert.equal(check(JSON.parse(text.replace('"big":1e400,"neg":-1e400,', ''))).valid, true);
  // NaN and Infinity, which only gRPC's protobuf Struct carries, are refused too.
  const nan = check({ ...v10(), capabilities: { extensions: [{ uri: 'https://ext.acme-corp.io/x', params: { n: Number.NaN } }] } });
  assert.deepEqual(nan.errors.map((f) => [f.path, f.message]), [['/capabilities/extensions/0/params/n', 'NaN is not a number JSON can hold: write a number, or a string']]);
});

test('a key given twice in the text is refused at its path, naming where the other one is; the value alone cannot show it', () => {
  const card = v10();
  const text = JSON.stringify(card, null, 2).replace('{\n  "name"', '{\n  "name": "A",\n  "name"');
  const v = validator.validateAgentCard(JSON.parse(text), text.length, { text, at: '' });
  assert.equal(v.errorCode, 'VALIDATION_FAILED');
  assert.deepEqual(v.errors.map((f) => [f.path, f.rule, f.message]), [
    ['/name', 'duplicate-key', '"name" is given twice in this object (also at line 2, column 3): a JSON reader keeps only one, and readers differ in which'],
  ]);
  assert.match(v.errors[0]!.hint!, /this registry would read the last one, other readers the first/);
  // A second "skills" list, on one line (a minified file, a JSON-lines document): columns only, each earlier one named.
  const skills = JSON.stringify(card).replace('{"name"', '{"skills":[],"skills":[],"name"');
  const twice = validator.validateAgentCard(JSON.parse(skills), skills.length, { text: skills, at: '' });
  assert.deepEqual(twice.errors.map((f) => [f.path, f.message.replace(/:.*/, '')]), [['/skills', '"skills" is given 3 times in this object (also at column 2 and column 14)']]);
  // In a nested object, with a "/" in the name (escaped in the path).
  const nested = JSON.stringify(card).replace('"capabilities":{', '"capabilities":{"a/b":1,"a/b":2,');
  assert.deepEqual(validator.validateAgentCard(JSON.parse(nested), nested.length, { text: nested, at: '' }).errors.map((f) => f.path), ['/capabilities/a~1b']);
  // Without the text the card is read as JSON.parse reads it, the last one kept.
  assert.equal(check(JSON.parse(text)).valid, true);
});

test('a number written with more digits than a double keeps is a warning saying what is stored; 1e300 and exact spellings are not', () => {
  const params = '{"id":12345678901234567890,"max":9223372036854775807,"pi":3.14159265358979323846,"tiny":1e-400,"big":1e300,"exact":9007199254740993e0,"same":1.50000000000000000000,"neg":-0.0}';
  const text = JSON.stringify(v10()).replace('"capabilities":{', `"capabilities":{"extensions":[{"uri":"https://ext.acme-corp.io/x","params":${params}}],`);
  const v = validator.validateAgentCard(JSON.parse(text), text.length, { text, at: '' });
  assert.equal(v.valid, true);
  const rounded = v.warnings.filter((w) => w.rule === 'number-rounded');
  assert.deepEqual(
    rounded.map((w) => [w.path.replace('/capabilities/extensions/0/params/', ''), w.message]),
    [
      ['id', '12345678901234567890 is read as 12345678901234567000: JSON numbers here are IEEE 754 doubles, exact to about 16 significant digits'],
      ['max', '9223372036854775807 is read as 9223372036854776000: JSON numbers here are IEEE 754 doubles, exact to about 16 significant digits'],
      ['pi', '3.14159265358979323846 is read as 3.141592653589793: JSON numbers here are IEEE 754 doubles, exact to about 16 significant digits'],
      ['tiny', '1e-400 is read as 0: it is nearer zero than the smallest number JSON here can hold (about 5e-324)'],
      ['exact', '9007199254740993e0 is read as 9007199254740992: JSON numbers here are IEEE 754 doubles, exact to about 16 significant digits'],
    ],
  );
  assert.equal(rounded[0]!.hint, 'The registry stores and serves 12345678901234567000. Write it as a string ("12345678901234567890") if its exact digits matter, as an id\'s do.');
  // The value alone (a data part) shows none of it: the request was read, and rounded, before.
  assert.equal(check(JSON.parse(text)).warnings.filter((w) => w.rule === 'number-rounded').length, 0);
});
