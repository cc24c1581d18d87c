/**
 * Identities that cannot be borrowed (issue 15, points 1 and 2): endpoint URLs are normalised
 * before they are compared, a URL held by one principal's entry cannot appear in another's, and
 * interface and server URLs must be http(s) (or a gRPC host:port address) without credentials or
 * control characters. End to end through the SDK client against real registries on SQLite and
 * PostgreSQL.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@a2a-js/sdk/client';
import { claimKey, coveringClaims, endpointIdentity, normalizeEndpoint, otherSpellings, withTenant } from '../src/lib/endpoint-url.js';
import { createDocumentValidator } from '../src/validation/index.js';
import { checkDocument, entryWriteOf } from '../src/registry/documents.js';
import { errorOf, op, resultOf, sdkClient, type WireJson } from './support/client.js';
import { mcpServer, toolspec, v03Card, v1Card } from './support/documents.js';
import { usePostgres } from './support/postgres.js';
import { TOKENS, startTestRegistry, type TestRegistry } from './support/registry.js';

const ALICE = 'https://alice.example.com/a2a';
/** Every spelling of alice's URL from the issue, and a few more an attacker would try. */
const VARIANTS = [
  'HTTPS://Alice.example.com:443/a2a/',
  'https://alice.example.com/a2a#x',
  'https://alice.example.com/a2a?',
  'https://alice.example.com/%61%32a',
  'https://alice.example.com./a2a',
  'https://alice.example.com/x/../a2a',
  'https://alice.example.com/a2a//',
  'https://alice.example.com//a2a',
  'http://alice.example.com/a2a',
  'http://alice.example.com:80/a2a',
];
/** Spellings that name the other scheme's default port: still alice's host, port and path. */
const WEB_PORT_VARIANTS = ['http://alice.example.com:443/a2a', 'https://alice.example.com:80/a2a', 'HTTP://Alice.example.com:443/a2a/'];

describe('normal form of endpoint URLs', () => {
  test('each variant of alice\'s URL normalises to hers (and claims the same key)', () => {
    const key = claimKey(normalizeEndpoint(ALICE, 'JSONRPC')!);
    assert.equal(normalizeEndpoint(ALICE, 'JSONRPC'), 'https://alice.example.com/a2a');
    for (const v of VARIANTS) assert.equal(claimKey(normalizeEndpoint(v, 'JSONRPC')!), key, v);
    for (const v of VARIANTS.filter((u) => u.toLowerCase().startsWith('https'))) assert.equal(normalizeEndpoint(v, 'JSONRPC'), 'https://alice.example.com/a2a', v);
  });

  test('http on port 443 and https on port 80 claim what https and http on their own ports do', () => {
    const key = claimKey(normalizeEndpoint(ALICE, 'JSONRPC')!);
    for (const v of WEB_PORT_VARIANTS) assert.equal(claimKey(normalizeEndpoint(v, 'JSONRPC')!), key, v);
    assert.equal(claimKey(normalizeEndpoint('http://grpc.example.com:443', 'GRPC')!), claimKey(normalizeEndpoint('grpc.example.com:443', 'GRPC')!));
    assert.equal(claimKey(normalizeEndpoint('http://[2001:db8::1]:443/a2a', 'JSONRPC')!), claimKey(normalizeEndpoint('https://[2001:db8::1]/a2a', 'JSONRPC')!));
    assert.equal(claimKey(normalizeEndpoint('https://alice.example.com:4430/a2a', 'JSONRPC')!), 'http://alice.example.com:4430/a2a', 'other ports stay');
  });

  test('the other spellings an entry is looked up by are the normal forms sharing its claim key, itself left out', () => {
    const wss = 'https://example.org/bindings/websocket/v1';
    const forms = [ALICE, 'http://alice.example.com:443/a2a', 'https://alice.example.com:4430/a2a?x=1', 'https://[2001:db8::1]/a2a', 'http://grpc.example.com:443', 'wss://alice.example.com', 'ws://alice.example.com:8080/a2a'];
    for (const form of forms) {
      const normalized = normalizeEndpoint(form, form.startsWith('ws') ? wss : 'JSONRPC')!;
      const spellings = otherSpellings(normalized);
      // On a port of its own, one per scheme; else each scheme on its default port and on the other's.
      const { port } = new URL(normalized);
      assert.equal(spellings.length, port !== '' && port !== '80' && port !== '443' ? 3 : 7, normalized);
      assert.ok(!spellings.includes(normalized), normalized);
      for (const spelling of spellings) {
        assert.equal(claimKey(spelling), claimKey(normalized), `${spelling} of ${normalized}`);
        assert.equal(normalizeEndpoint(spelling, spelling.startsWith('ws') ? wss : 'JSONRPC'), spelling, `${spelling} is a normal form`);
      }
    }
    assert.deepEqual(otherSpellings('https://{HOST}/a2a'), [], 'a placeholder has no other spelling');
  });

  test('a WebSocket URL claims the host, port and path its handshake requests', () => {
    const ws = 'https://example.org/bindings/websocket/v1';
    const key = claimKey(normalizeEndpoint(ALICE, 'JSONRPC')!);
    for (const v of ['wss://alice.example.com/a2a', 'WS://Alice.example.com:80/a2a/', 'ws://alice.example.com:443/a2a']) assert.equal(claimKey(normalizeEndpoint(v, ws)!), key, v);
    assert.equal(claimKey(normalizeEndpoint('wss://alice.example.com:8443/a2a', ws)!), claimKey(normalizeEndpoint('https://alice.example.com:8443/a2a', 'JSONRPC')!));
  });

  test('percent-encoding: unreserved escapes decoded, the others upper-cased; reserved characters kept', () => {
    assert.equal(normalizeEndpoint('https://h.example.com/a%2fb?q=%7e&r=%3d', 'JSONRPC'), 'https://h.example.com/a%2Fb?q=~&r=%3D');
    assert.notEqual(normalizeEndpoint('https://h.example.com/a%2Fb', 'JSONRPC'), normalizeEndpoint('https://h.example.com/a/b', 'JSONRPC'));
    assert.notEqual(normalizeEndpoint('https://h.example.com/a2a?tenant=x', 'JSONRPC'), normalizeEndpoint('https://h.example.com/a2a', 'JSONRPC'));
  });

  test('hosts: IDNA and IPv4 forms canonical, other ports significant', () => {
    assert.equal(normalizeEndpoint('https://bücher.example/', 'JSONRPC'), 'https://xn--bcher-kva.example');
    assert.equal(normalizeEndpoint('http://0x7f.1/', 'JSONRPC'), 'http://127.0.0.1');
    // An IPv4-mapped IPv6 address connects to that IPv4 address: the same endpoint, in any spelling.
    for (const mapped of ['https://[::ffff:203.0.113.7]/a2a', 'https://[0:0:0:0:0:FFFF:CB00:7107]:443/a2a/', 'http://[::ffff:cb00:7107]:443/a2a']) {
      assert.equal(claimKey(normalizeEndpoint(mapped, 'JSONRPC')!), 'http://203.0.113.7/a2a', mapped);
    }
    assert.equal(normalizeEndpoint('https://[64:ff9b::203.0.113.7]/a2a', 'JSONRPC'), 'https://[64:ff9b::cb00:7107]/a2a', 'a NAT64 address is another host');
    assert.equal(normalizeEndpoint('https://h.example.com:8443/a2a', 'JSONRPC'), 'https://h.example.com:8443/a2a');
  });

  test('credentials and control characters have no normal form', () => {
    assert.equal(normalizeEndpoint('https://bob:secret@alice.example.com/a2a', 'JSONRPC'), undefined);
    assert.equal(normalizeEndpoint('https://alice.exa\nmple.com/a2a', 'JSONRPC'), undefined);
    assert.equal(normalizeEndpoint('https://alice.example.com/a2a\t', 'JSONRPC'), undefined);
  });

  test('a gRPC address is the same endpoint as its https origin', () => {
    assert.equal(normalizeEndpoint('GRPC.example.com:443', 'GRPC'), 'https://grpc.example.com');
    assert.equal(normalizeEndpoint('grpc.example.com:50051', 'GRPC'), 'https://grpc.example.com:50051');
    assert.equal(normalizeEndpoint('grpc.example.com:50051', 'JSONRPC'), undefined);
  });

  test('a tenant is part of the endpoint: kept by claim keys and other spellings, exactly as written', () => {
    const acme = withTenant('https://alice.example.com:80/a2a', 'Acme #1');
    assert.equal(acme, 'https://alice.example.com:80/a2a#tenant=Acme%20%231');
    assert.equal(claimKey(acme), 'http://alice.example.com/a2a#tenant=Acme%20%231');
    assert.ok(otherSpellings(acme).includes('http://alice.example.com/a2a#tenant=Acme%20%231'));
    assert.ok(otherSpellings(acme).every((spelling) => spelling.endsWith('#tenant=Acme%20%231')));
    assert.equal(withTenant('https://alice.example.com/a2a', ''), 'https://alice.example.com/a2a', 'an empty tenant is none');
    const tenants = endpointIdentity([
      { url: 'https://alice.example.com/a2a', protocolBinding: 'JSONRPC', tenant: 'acme' },
      { url: 'https://alice.example.com/a2a', protocolBinding: 'HTTP+JSON' },
    ]);
    assert.deepEqual(tenants, { primary: 'https://alice.example.com/a2a#tenant=acme', claims: ['http://alice.example.com/a2a', 'http://alice.example.com/a2a#tenant=acme'] });
  });

  test('a registration parses each endpoint URL once for its identity (and once for the warnings walk over every URL)', () => {
    const card: WireJson = v1Card('Parse Agent', 'https://parse.example.com/a2a');
    card.supportedInterfaces.push({ url: 'https://parse.example.com/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 't' });
    const text = JSON.stringify(card);
    const subject = { type: 'agent-card' as const, card, documentText: text, sizeBytes: text.length };
    const validator = createDocumentValidator({ maxDocumentBytes: 10_240 });
    const Original = globalThis.URL;
    let parses = 0;
    globalThis.URL = class extends Original {
      constructor(url: string | URL, base?: string | URL) {
        super(url, base);
        parses++;
      }
    } as typeof URL;
    let write;
    try {
      write = entryWriteOf(subject, checkDocument(validator, subject)).write;
    } finally {
      globalThis.URL = Original;
    }
    assert.equal(parses, 4, 'two URLs, each checked once and walked once');
    assert.equal(write.identityUrl, 'https://parse.example.com/a2a');
    assert.deepEqual(write.urls, ['http://parse.example.com/a2a', 'http://parse.example.com/rest#tenant=t']);
    assert.ok(write.identityAliases?.includes('http://parse.example.com/a2a'));
  });

  test('a query string is no ownership boundary: claim keys leave it out, identities keep it; a URL is held under every tenant', () => {
    const key = (url: string, tenant?: string) => claimKey(withTenant(normalizeEndpoint(url, 'JSONRPC')!, tenant));
    for (const url of ['https://h.example.com/a2a?agent=a', 'https://h.example.com/a2a?x=1&agent=a', 'https://h.example.com/a2a?agent=a&x=1', 'HTTP://H.example.com:443/a2a/?x#frag']) {
      assert.equal(key(url), 'http://h.example.com/a2a', url);
    }
    assert.equal(key('https://h.example.com/a2a?agent=a', 't'), 'http://h.example.com/a2a#tenant=t', 'a tenant is kept');
    assert.equal(key('https://h.example.com/a%3Fb?x'), 'http://h.example.com/a%3Fb', 'an escaped ? is part of the path');
    assert.notEqual(normalizeEndpoint('https://h.example.com/a2a?agent=a', 'JSONRPC'), normalizeEndpoint('https://h.example.com/a2a?agent=b', 'JSONRPC'), 'one principal\'s agents by query are two entries');
    assert.ok(otherSpellings('https://h.example.com/a2a?agent=a').includes('http://h.example.com/a2a?agent=a'), 'looked up by its other spellings with its query');
    assert.deepEqual(coveringClaims('http://h.example.com/a2a'), []);
    assert.deepEqual(coveringClaims('http://h.example.com/a2a#tenant=t'), ['http://h.example.com/a2a']);
    assert.equal(normalizeEndpoint('https://h.example.com/a2a?x=1#frag', 'JSONRPC'), 'https://h.example.com/a2a?x=1', 'a fragment never reaches the server');
  });
});

describe('interface and server URLs: schemes, credentials, control characters', () => {
  const validator = createDocumentValidator({ maxDocumentBytes: 10_240 });
  const cardWith = (url: string, protocolBinding = 'JSONRPC') => {
    const card: WireJson = v1Card('Scheme Agent', 'https://ok.example.org/a2a');
    card.supportedInterfaces.push({ url, protocolBinding, protocolVersion: '1.0' });
    return card;
  };
  const errorAt = (card: unknown, path: string) => {
    const v = validator.validateAgentCard(card, JSON.stringify(card).length);
    assert.equal(v.valid, false, `${path} should be refused`);
    const e = v.errors.find((f) => f.path === path);
    assert.ok(e, `an error at ${path}: ${JSON.stringify(v.errors)}`);
    assert.ok(e.hint, 'with a hint');
    assert.ok(!v.warnings.some((w) => w.path === path), 'not also a warning');
    return e;
  };

  for (const url of ['javascript:alert(1)', 'file:///etc/passwd', 'data:text/html,<b>hi</b>', 'ftp://files.example.org/a2a', 'mailto:a@example.org']) {
    test(`${url.split(':')[0]}: is refused with the JSON path and a hint`, () => {
      const e = errorAt(cardWith(url), '/supportedInterfaces/1/url');
      assert.equal(e.rule, 'url-scheme');
      assert.match(e.message, /must use http or https/);
    });
  }

  test('v0.3: the card url and additionalInterfaces urls too', () => {
    const card: WireJson = v03Card('Old Agent', 'ftp://old.example.org/a2a');
    card.additionalInterfaces = [{ url: 'javascript:void(0)', transport: 'HTTP+JSON' }];
    errorAt(card, '/url');
    errorAt(card, '/additionalInterfaces/0/url');
  });

  test('MCP server URL', () => {
    const v = validator.validateMcpServer(mcpServer('files', 'file:///srv/mcp.sock'), toolspec(), 100);
    assert.equal(v.valid, false);
    const e = v.errors.find((f) => f.path === '/mcpServer/url');
    assert.ok(e?.hint, JSON.stringify(v.errors));
    assert.match(`${e.message} ${e.hint}`, /http/);
  });

  test('gRPC: an https URL or a host:port address; other bindings need a scheme (with a hint that adds it)', () => {
    for (const ok of ['https://grpc.example.org/a2a', 'grpc.example.org:443', '[2001:db8::1]:50051']) {
      const card = cardWith(ok, 'GRPC');
      assert.equal(validator.validateAgentCard(card, 500).valid, true, ok);
    }
    assert.equal(errorAt(cardWith('grpc://grpc.example.org:443', 'GRPC'), '/supportedInterfaces/1/url').rule, 'url-scheme');
    const e = errorAt(cardWith('agent.example.org:8080/a2a'), '/supportedInterfaces/1/url');
    assert.match(e.hint!, /"https:\/\/agent\.example\.org:8080\/a2a"/);
  });

  test('gRPC addresses as gRPC clients dial them (host:port by name or IPv4, [ipv6]:port, dns:///host:port) are one form, read as the https URL they dial', () => {
    const warningsOf = (url: string) => {
      const card = cardWith(url, 'GRPC');
      const v = validator.validateAgentCard(card, JSON.stringify(card).length);
      assert.equal(v.valid, true, `${url}: ${JSON.stringify(v.errors)}`);
      return v.warnings.filter((w) => w.path === '/supportedInterfaces/1/url').map((w) => w.rule);
    };
    // "10.1.2.3:443" and "[2001:db8::1]:50051" were warned "not an absolute URL" (with an https hint), "grpc.acme.org:443" not.
    for (const url of ['grpc.acme.org:443', '10.1.2.3:443', '[2001:db8::1]:50051', 'dns:///grpc.acme.org:443', 'dns://8.8.8.8/grpc.acme.org:443']) assert.deepEqual(warningsOf(url), [], url);
    // Read as the URL they dial, the same warnings as that URL: a loopback address (it was none for "localhost:50051", read as the scheme "localhost:"), an example host.
    for (const url of ['127.0.0.1:50051', 'localhost:50051', '[::1]:50051', 'dns:///localhost:50051']) assert.deepEqual(warningsOf(url), ['loopback-url'], url);
    assert.deepEqual(warningsOf('grpc.example.com:443'), ['placeholder-url']);
    // dns:///host:port was refused (the scheme "dns"), though PUBLIC_GRPC_URL takes it and the registry's own card may carry it.
    assert.equal(normalizeEndpoint('dns:///grpc.acme.org:443', 'GRPC'), 'https://grpc.acme.org');
    assert.equal(normalizeEndpoint('grpc.acme.org:443', 'GRPC'), 'https://grpc.acme.org');
    // A name's trailing dot, insignificant as in an https URL: it was refused as the scheme "grpc.acme.org.".
    assert.equal(normalizeEndpoint('grpc.acme.org.:443', 'GRPC'), 'https://grpc.acme.org');
    assert.deepEqual(warningsOf('grpc.acme.org.:443'), []);
    assert.equal(normalizeEndpoint('10.1.2.3:50051', 'GRPC'), 'https://10.1.2.3:50051');
    assert.equal(normalizeEndpoint('[2001:DB8::1]:50051', 'GRPC'), 'https://[2001:db8::1]:50051');
    assert.equal(normalizeEndpoint('dns:///grpc.acme.org:443', 'JSONRPC'), undefined, 'a gRPC address only for a gRPC interface');
    for (const bad of ['grpc.acme.org:99999', '[not-ipv6]:443', 'dns:///grpc.acme.org', 'dns:////grpc.acme.org:443']) {
      assert.equal(normalizeEndpoint(bad, 'GRPC'), undefined, bad);
    }
    // A host written in Unicode, which gRPC clients look up as written: told its ASCII form (it was "not an absolute URL", with a hint to write host:port).
    for (const [url, ascii] of [['bücher.de:443', 'xn--bcher-kva.de:443'], ['dns:///例え.jp:50051', 'dns:///xn--r8jz45g.jp:50051']]) {
      const card = cardWith(url, 'GRPC');
      const finding = validator.validateAgentCard(card, JSON.stringify(card).length).errors.find((f) => f.path === '/supportedInterfaces/1/url');
      assert.equal(finding?.message, `"${url}" is a gRPC address whose host is written in Unicode, which gRPC clients look up as written, and DNS names are ASCII`, url);
      assert.equal(finding?.hint, `Write the host in its ASCII form, as DNS has it: "${ascii}".`, url);
      assert.deepEqual(warningsOf(ascii), [], ascii);
    }
    // A v0.3 card's gRPC url and additional interface, by their transport.
    const v03 = { ...v03Card('Old gRPC', 'https://old.acme.org/a2a'), additionalInterfaces: [{ url: '10.1.2.3:443', transport: 'GRPC' }] };
    const old = validator.validateAgentCard(v03, JSON.stringify(v03).length);
    assert.equal(old.valid, true, JSON.stringify(old.errors));
    assert.deepEqual(old.warnings.filter((w) => w.rule === 'invalid-url'), []);
  });

  test('a custom binding named by a URI may use wss, as the spec\'s example does; core bindings may not', () => {
    assert.equal(validator.validateAgentCard(cardWith('wss://agent.example.org/ws', 'https://example.org/bindings/websocket/v1'), 500).valid, true);
    errorAt(cardWith('wss://agent.example.org/ws', 'JSONRPC'), '/supportedInterfaces/1/url');
  });

  test('credentials and control characters are located errors', () => {
    const credentials = errorAt(cardWith('https://bob:hunter2@agent.example.org/a2a'), '/supportedInterfaces/1/url');
    assert.equal(credentials.rule, 'url-credentials');
    // The finding is shown to whoever reads it: the password is masked in its message.
    assert.match(credentials.message, /bob:\*\*\*@agent\.example\.org/);
    assert.doesNotMatch(JSON.stringify(credentials), /hunter2/);
    const e = errorAt(cardWith('https://agent.exa\nmple.org/a2a'), '/supportedInterfaces/1/url');
    assert.equal(e.rule, 'url-control-character');
    assert.match(e.message, /U\+000A at position 17/);
    const v = validator.validateMcpServer(mcpServer('files', 'https://user@mcp.example.org/mcp'), toolspec(), 100);
    assert.equal(v.errors.find((f) => f.path === '/mcpServer/url')?.rule, 'url-credentials');
  });

  test('a host whose letters pass for another name (Cyrillic or Greek among Latin) is refused, naming its real name; IDN hosts in one script are not', () => {
    const e = errorAt(cardWith('https://\u0430lice.example.com/a2a'), '/supportedInterfaces/1/url');
    assert.equal(e.rule, 'url-mixed-script');
    assert.match(e.message, /mixes Latin and Cyrillic letters in "\u0430lice", so it reads as another name than it is \(xn--lice-43d\.example\.com\)/);
    assert.match(e.hint!, /"https:\/\/xn--lice-43d\.example\.com\/a2a"/);
    assert.equal(errorAt(cardWith('https://g\u03bf\u03bfgle.example.com/a2a'), '/supportedInterfaces/1/url').rule, 'url-mixed-script');
    for (const url of ['https://xn--lice-43d.example.com/a2a', 'https://bücher.example/a2a', 'https://пример.рф/a2a', 'https://例え.jp/a2a', 'https://alice.example.com/caf\u00e9']) {
      assert.equal(validator.validateAgentCard(cardWith(url), 500).valid, true, url);
    }
    const server = validator.validateMcpServer(mcpServer('files', 'https://\u0430lice.example.com/mcp'), toolspec(), 100);
    assert.deepEqual(server.errors.map((f) => [f.path, f.rule]), [['/mcpServer/url', 'url-mixed-script']]);
    // Percent-encoded, the host is the same Unicode name (URL parsing decodes it): checked alike.
    assert.equal(errorAt(cardWith('https://%D0%B0lice.example.com/a2a'), '/supportedInterfaces/1/url').rule, 'url-mixed-script');
    assert.equal(errorAt(cardWith('https://%D1%95%D1%81%D0%BE%D1%80%D0%B5.com/a2a'), '/supportedInterfaces/1/url').rule, 'url-lookalike-host');
    for (const url of ['https://b%C3%BCcher.example/a2a', 'https://alice.example.com/%D0%B0']) assert.equal(validator.validateAgentCard(cardWith(url), 500).valid, true, url);
    // A gRPC address's host alike, percent-encoded too, as gRPC decodes it (it was told to write the
    // look-alike in ASCII, and the percent-encoded one "uses the scheme dns").
    for (const [url, ascii] of [['\u0430lice.example.com:443', 'xn--lice-43d.example.com:443'], ['dns:///\u0430lice.example.com:443', 'dns:///xn--lice-43d.example.com:443'], ['dns:///%D0%B0lice.example.com:443', 'dns:///xn--lice-43d.example.com:443']]) {
      const g = errorAt(cardWith(url, 'GRPC'), '/supportedInterfaces/1/url');
      assert.equal(g.rule, 'url-mixed-script', url);
      assert.match(g.message, /mixes Latin and Cyrillic letters in "\u0430lice", so it reads as another name than it is \(xn--lice-43d\.example\.com\)/, url);
      assert.equal(g.hint, `Correct the look-alike letters; if this really is the host's name, write it in its ASCII form, as DNS shows it: "${ascii}".`, url);
    }
    assert.equal(errorAt(cardWith('\u0455\u0441\u043e\u0440\u0435.com:443', 'GRPC'), '/supportedInterfaces/1/url').rule, 'url-lookalike-host');
    assert.match(errorAt(cardWith('dns:///b%C3%BCcher.de:443', 'GRPC'), '/supportedInterfaces/1/url').hint!, /"dns:\/\/\/xn--bcher-kva\.de:443"/);
  });

  test('a host whose every letter outside ASCII looks like an ASCII one (all Cyrillic "ѕсоре.com") is refused too, naming what it reads as and its real name', () => {
    const e = errorAt(cardWith('https://\u0455\u0441\u043e\u0440\u0435.com/a2a'), '/supportedInterfaces/1/url');
    assert.equal(e.rule, 'url-lookalike-host');
    assert.match(e.message, /is written in letters that look like the ASCII name "scope\.com", so it reads as that name but is another \(xn--e1argc3h\.com\)/);
    assert.match(e.hint!, /"https:\/\/xn--e1argc3h\.com\/a2a"/);
    // "раураӏ" (with a palochka), "аррӏе": every letter Cyrillic. ("раураl" with a Latin l mixes scripts.)
    for (const host of ['\u0440\u0430\u0443\u0440\u0430\u04cf.com', '\u0430\u0440\u0440\u04cf\u0435.example.com']) {
      assert.equal(errorAt(cardWith(`https://${host}/a2a`), '/supportedInterfaces/1/url').rule, 'url-lookalike-host', host);
    }
    assert.equal(errorAt(cardWith('https://\u0440\u0430\u0443\u0440\u0430l.com/a2a'), '/supportedInterfaces/1/url').rule, 'url-mixed-script');
    // A name that does not read as an ASCII one stays: Cyrillic on a Cyrillic TLD, German, Greek words.
    for (const url of ['https://\u0441\u0430\u0445\u0430\u0440.\u0440\u0444/a2a', 'https://münchen.de/a2a', 'https://\u03b1\u03ba.gr/a2a', 'https://xn--e1argc3h.com/a2a']) {
      assert.equal(validator.validateAgentCard(cardWith(url), 500).valid, true, url);
    }
    const server = validator.validateMcpServer(mcpServer('files', 'https://\u0455\u0441\u043e\u0440\u0435.com/mcp'), toolspec(), 100);
    assert.deepEqual(server.errors.map((f) => [f.path, f.rule]), [['/mcpServer/url', 'url-lookalike-host']]);
  });

  test('an unfilled template is refused (it would be the identity of every agent made from one sample); an example host stays a warning', () => {
    const v = validator.validateAgentCard(cardWith('{BASE_URL}/a2a'), 500);
    assert.equal(v.valid, false);
    assert.equal(errorAt(cardWith('{BASE_URL}/a2a'), '/supportedInterfaces/1/url').rule, 'url-placeholder');
    assert.equal(errorAt(cardWith('https://{HOST}/a2a'), '/supportedInterfaces/1/url').rule, 'url-placeholder');
    const example = validator.validateAgentCard(cardWith('https://example.com/a2a'), 500);
    assert.equal(example.valid, true);
    assert.equal(example.warnings.find((w) => w.path === '/supportedInterfaces/1/url')?.rule, 'placeholder-url');
  });
});

// --- end to end, on both engines ---------------------------------------------------------------

const postgres = usePostgres();

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`URLs belong to one principal (${engine})`, () => {
    let registry: TestRegistry | undefined;
    let alice: Client;
    let bob: Client;
    let admin: Client;
    let aliceId: string;
    const skip = () => (engine === 'postgres' ? postgres.skipReason : undefined);

    before(async () => {
      if (skip()) return;
      const env = engine === 'postgres' ? { DATABASE_URL: await postgres.server.createDatabase('identity') } : {};
      registry = await startTestRegistry(env);
      [alice, bob, admin] = await Promise.all([
        sdkClient(registry.url, { token: TOKENS.alice }),
        sdkClient(registry.url, { token: TOKENS.bob }),
        sdkClient(registry.url, { token: TOKENS.admin }),
      ]);
      aliceId = resultOf(await op(alice, { register: { agentCard: v1Card('Alice Agent', ALICE) } })).id;
    });
    after(async () => {
      await registry?.close();
      if (registry) fs.rmSync(registry.dataDir, { recursive: true, force: true });
    });

    const refused = (task: WireJson, url: string, owner = 'alice') => {
      const error = errorOf(task);
      assert.equal(error.code, 'FORBIDDEN');
      assert.ok(error.message.includes(url), `names the URL: ${error.message}`);
      const text = JSON.stringify(error).replaceAll(url, '').replaceAll(JSON.stringify(url).slice(1, -1), '');
      assert.doesNotMatch(text, new RegExp(`\\b${owner}\\b`, 'i'), 'never the other owner');
      return error;
    };

    test('bob cannot register any spelling of alice\'s URL as his primary interface', async (t) => {
      if (skip()) return t.skip(skip());
      for (const url of [...VARIANTS, ...WEB_PORT_VARIANTS]) refused(await op(bob, { register: { agentCard: v1Card('Bob Agent', url) } }), url);
      const v03 = v03Card('Bob Old Agent', 'HTTPS://ALICE.example.com/a2a/');
      refused(await op(bob, { register: { agentCard: v03 } }), 'HTTPS://ALICE.example.com/a2a/');
    });

    test('nor list it as a secondary interface or as his MCP server\'s URL', async (t) => {
      if (skip()) return t.skip(skip());
      const card: WireJson = v1Card('Bob Agent', 'https://bob.example.com/a2a');
      card.supportedInterfaces.push({ url: 'https://alice.example.com/%61%32a', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
      const error = refused(await op(bob, { register: { agentCard: card } }), 'https://alice.example.com/%61%32a');
      assert.deepEqual(error.details.map((d: WireJson) => d.path), ['/supportedInterfaces/1/url']);
      refused(await op(bob, { register: { mcpServer: mcpServer('bob-files', 'https://alice.example.com/a2a#x'), toolspec: toolspec() } }), 'https://alice.example.com/a2a#x');
      const socket: WireJson = v1Card('Bob Socket Agent', 'https://bob.example.com/a2a');
      socket.supportedInterfaces.push({ url: 'wss://alice.example.com/a2a', protocolBinding: 'https://example.org/bindings/websocket/v1', protocolVersion: '1.0' });
      refused(await op(bob, { register: { agentCard: socket } }), 'wss://alice.example.com/a2a');
      // Nothing of bob's was stored.
      const bobs = resultOf(await op(admin, { list: { filter: { owner: 'bob' } } })).entries;
      assert.equal(bobs.length, 0);
    });

    test('an admin registering a new entry is held to the same rule', async (t) => {
      if (skip()) return t.skip(skip());
      const card: WireJson = v1Card('Admin Agent', 'https://admin.example.com/a2a');
      card.supportedInterfaces.push({ url: ALICE, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
      refused(await op(admin, { register: { agentCard: card } }), ALICE);
    });

    test('alice herself: another spelling updates her entry; her URL may serve her MCP server too', async (t) => {
      if (skip()) return t.skip(skip());
      const card = v1Card('Alice Agent', 'HTTPS://Alice.example.com:443/a2a/');
      card.description = 'Now with a trailing slash.';
      const updated = resultOf(await op(alice, { register: { agentCard: card } }));
      assert.equal(updated.id, aliceId);
      assert.equal(updated.revision, 2);
      const mcp = resultOf(await op(alice, { register: { mcpServer: mcpServer('alice-mcp', 'https://alice.example.com/a2a'), toolspec: toolspec() } }));
      assert.equal(mcp.created, true);
      const entry = resultOf(await op(alice, { get: { id: aliceId } }));
      assert.equal(entry.interfaces[0].url, 'HTTPS://Alice.example.com:443/a2a/', 'shown as registered');
      // The http spelling (and http naming port 443) is the same endpoint: her entry again, not a
      // second one beside it (an agent moved to https, or back). Each was registered anew before.
      const plain = resultOf(await op(alice, { register: { agentCard: v1Card('Alice Agent', 'http://alice.example.com/a2a') } }));
      assert.deepEqual([plain.id, plain.created, plain.revision], [aliceId, false, 3]);
      const back = resultOf(await op(alice, { register: { agentCard: v1Card('Alice Agent', ALICE) } }));
      assert.deepEqual([back.id, back.created, back.revision], [aliceId, false, 4]);
      const server = resultOf(await op(alice, { register: { mcpServer: mcpServer('alice-mcp', 'http://alice.example.com:443/a2a'), toolspec: toolspec() } }));
      assert.deepEqual([server.id, server.created], [mcp.id, false]);
      const mine = resultOf(await op(alice, { list: { filter: { mine: true } } })).entries;
      assert.deepEqual(mine.map((e: WireJson) => e.id).sort(), [aliceId, mcp.id].sort(), 'one agent and one MCP server');
    });

    test('once every entry of alice that used the URL is gone, bob may use it', async (t) => {
      if (skip()) return t.skip(skip());
      const card: WireJson = v1Card('Bob Agent', 'https://bob.example.com/a2a');
      card.supportedInterfaces.push({ url: ALICE, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
      const mine = resultOf(await op(alice, { list: { filter: { mine: true } } })).entries;
      for (const e of mine) resultOf(await op(alice, { unregister: { id: e.id } }));
      const bobs = resultOf(await op(bob, { register: { agentCard: card } }));
      assert.equal(bobs.created, true);
      refused(await op(alice, { register: { agentCard: v1Card('Alice Agent', ALICE) } }), ALICE, 'bob');
    });

    test('one multi-tenant host: an interface is its URL and its tenant (A2A v1.0 AgentInterface.tenant)', async (t) => {
      if (skip()) return t.skip(skip());
      const host = 'https://tenants.example.com/a2a';
      const tenantCard = (name: string, tenant: string, url = host): WireJson => {
        const card: WireJson = v1Card(name, url);
        card.supportedInterfaces[0].tenant = tenant;
        return card;
      };
      const acme = resultOf(await op(alice, { register: { agentCard: tenantCard('Acme Agent', 'acme') } }));
      // Another agent of the same owner on the same host, another tenant: a second entry, not an update of the first.
      const globex = resultOf(await op(alice, { register: { agentCard: tenantCard('Globex Agent', 'globex') } }));
      assert.deepEqual([globex.created, globex.id === acme.id], [true, false]);
      // Another owner's agent under a third tenant is his; the tenant of alice's agent is not.
      assert.equal(resultOf(await op(bob, { register: { agentCard: tenantCard('Initech Agent', 'initech') } })).created, true);
      refused(await op(bob, { register: { agentCard: tenantCard('Fake Acme', 'acme', 'HTTP://Tenants.example.com:443/a2a/') } }), 'HTTP://Tenants.example.com:443/a2a/');
      const secondary: WireJson = v1Card('Bob Multi', 'https://bob.example.com/tenants');
      secondary.supportedInterfaces.push({ url: host, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 'globex' });
      refused(await op(bob, { register: { agentCard: secondary } }), host);
      // Tenant ids are opaque: another case is another tenant.
      assert.equal(resultOf(await op(bob, { register: { agentCard: tenantCard('Bob ACME', 'ACME') } })).created, true);
      // Alice's other spelling of one of her interfaces updates that entry, and only it.
      const respelled = resultOf(await op(alice, { register: { agentCard: tenantCard('Acme Agent v2', 'acme', 'http://tenants.example.com/a2a') } }));
      assert.deepEqual([respelled.id, respelled.revision], [acme.id, 2]);
      assert.equal(resultOf(await op(alice, { get: { id: globex.id } })).revision, 1);
      // A URL held without a tenant is its holder's under any tenant: an agent that is not
      // multi-tenant ignores the tenant, so bob's entry would be alice's agent.
      const solo = 'https://solo.example.com/a2a';
      resultOf(await op(alice, { register: { agentCard: v1Card('Solo Agent', solo) } }));
      refused(await op(bob, { register: { agentCard: tenantCard('Solo Lookalike', 'anything', 'HTTPS://SOLO.example.com/a2a') } }), 'HTTPS://SOLO.example.com/a2a');
      const listing: WireJson = v1Card('Bob Lister', 'https://bob.example.com/solo');
      listing.supportedInterfaces.push({ url: solo, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 'x' });
      refused(await op(bob, { register: { agentCard: listing } }), solo);
      assert.equal(resultOf(await op(alice, { register: { agentCard: tenantCard('Solo Tenant', 'eu', solo) } })).created, true, 'alice may');
    });

    test('a query string is no ownership boundary: a URL is one principal\'s under every query string, in either order', async (t) => {
      if (skip()) return t.skip(skip());
      const held = 'https://q.example.com/a2a';
      const first = resultOf(await op(alice, { register: { agentCard: v1Card('Query Host Agent', `${held}?agent=a`) } }));
      // A server may ignore the query, or a parameter added to it: bob's entry would be alice's agent.
      const tenantHint = "Agents of several principals behind one URL are told apart by each interface's `tenant` (A2A v1.0), not by a query string.";
      for (const url of [`${held}?x=1&agent=a`, `${held}?agent=a&x=1`, `${held}?agent=b`, 'HTTP://Q.example.com:443/a2a/?agent=bob#frag']) {
        const error = refused(await op(bob, { register: { agentCard: v1Card('Query Lookalike', url) } }), url);
        const base = url.replace(/[?#].*$/, '');
        assert.ok(error.message.includes(`is ${base} under a query string, and ${base} is already used by an entry of another principal`), error.message);
        assert.equal(error.details[0].hint, `Remove it, or register from the principal that owns ${base}. ${tenantHint}`);
      }
      const bare = refused(await op(bob, { register: { agentCard: v1Card('Query Front', held) } }), held);
      assert.equal(bare.details[0].hint, `Remove it, or register from the principal that owns that endpoint. ${tenantHint}`);
      const secondary: WireJson = v1Card('Bob Query Lister', 'https://bob.example.com/query');
      secondary.supportedInterfaces.push({ url: `${held}?agent=b`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 't' });
      const both = refused(await op(bob, { register: { agentCard: secondary } }), `${held}?agent=b`);
      assert.deepEqual(both.details.map((d: WireJson) => [d.path, d.rule]), [['/supportedInterfaces/1/url', 'url-taken']]);
      assert.match(both.message, /under a query string and a tenant/);
      refused(await op(bob, { register: { mcpServer: mcpServer('bob-query', `${held}?mcp=1`), toolspec: toolspec() } }), `${held}?mcp=1`);
      // Alice's agents told apart by query are entries of their own; each updates by its own URL.
      const other = resultOf(await op(alice, { register: { agentCard: v1Card('Query Host Agent X', `${held}?x=1`) } }));
      assert.deepEqual([other.created, other.id === first.id], [true, false]);
      assert.equal(resultOf(await op(alice, { register: { agentCard: v1Card('Query Host Front', held) } })).created, true);
      const again = resultOf(await op(alice, { register: { agentCard: v1Card('Query Host Agent v2', `${held}?agent=a`) } }));
      assert.deepEqual([again.id, again.revision], [first.id, 2]);
      // Whoever lists one query of a URL first holds the URL: its owner coming later is refused
      // too (as for the URL itself), and the first claimant keeps updating his entry.
      const shared = 'https://shared-q.example.com/a2a';
      const bobs = resultOf(await op(bob, { register: { agentCard: v1Card('Routed Bob', `${shared}?agent=bob`) } }));
      refused(await op(alice, { register: { agentCard: v1Card('Routed Front', shared) } }), shared, 'bob');
      refused(await op(alice, { register: { agentCard: v1Card('Routed Alice', `${shared}?agent=alice`) } }), `${shared}?agent=alice`, 'bob');
      const bobAgain = resultOf(await op(bob, { register: { agentCard: v1Card('Routed Bob v2', `${shared}?agent=bob`) } }));
      assert.deepEqual([bobAgain.id, bobAgain.revision], [bobs.id, 2]);
    });

    test('two owners of agents made from one sample card: each is told to fill in its template, neither that the other owns it', async (t) => {
      if (skip()) return t.skip(skip());
      for (const [client, url] of [[alice, '{BASE_URL}/a2a'], [bob, '{BASE_URL}/a2a'], [bob, 'https://{AGENT_HOST}/a2a']] as const) {
        const error = errorOf(await op(client, { register: { agentCard: v1Card('Sample Agent', url) } }));
        assert.equal(error.code, 'VALIDATION_FAILED', url);
        assert.deepEqual(error.details.map((d: WireJson) => [d.path, d.rule]), [['/supportedInterfaces/0/url', 'url-placeholder']]);
      }
    });

    test('an update that drops a URL releases it', async (t) => {
      if (skip()) return t.skip(skip());
      const shared = 'https://shared.example.com/a2a';
      const card: WireJson = v1Card('Bob Agent', 'https://bob.example.com/a2a');
      card.supportedInterfaces.push({ url: shared, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' });
      resultOf(await op(bob, { register: { agentCard: card } }));
      refused(await op(alice, { register: { agentCard: v1Card('Alice Shared', shared) } }), shared, 'bob');
      card.supportedInterfaces = card.supportedInterfaces.slice(0, 1);
      assert.equal(resultOf(await op(bob, { register: { agentCard: card } })).changed, true);
      assert.equal(resultOf(await op(alice, { register: { agentCard: v1Card('Alice Shared', shared) } })).created, true);
    });
  });
}
