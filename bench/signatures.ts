/**
 * What signed cards cost: verifying one signature per algorithm (canonicalisation included), a
 * registration of a signed card vs an unsigned one (through the service, durable, SQLite), and
 * re-evaluating every stored signed card after the trust roots change.
 *
 *   npx tsx bench/signatures.ts [--entries 2000] [--verifications 300]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildRegistry } from '../src/composition/build-registry.js';
import { loadConfig } from '../src/config/config.js';
import type { Subject } from '../src/contract/subject.js';
import { createLogger } from '../src/observability/logger.js';
import { signCard } from '../src/trust/card-signing.js';
import { generateSigningKey, parseSigningKey, type KeygenAlgorithm } from '../src/trust/jwks.js';
import { ACCEPTED_ALGORITHMS, createSignatureVerifier } from '../src/validation/signature.js';
import { benchCard } from './lib/bench-card.js';

const { values } = parseArgs({ options: { entries: { type: 'string', default: '2000' }, verifications: { type: 'string', default: '300' } } });
const entries = Number(values.entries);
const verifications = Number(values.verifications);

async function key(alg: KeygenAlgorithm, kid: string) {
  const pair = await generateSigningKey(alg, kid);
  return { signing: await parseSigningKey(pair.privateJwk, kid, ACCEPTED_ALGORITHMS), publicJwk: pair.publicJwk };
}

const perOp = (ms: number, n: number) => `${((ms * 1000) / n).toFixed(0)} µs`;

// 1. One verification, per algorithm: the best of 3 rounds (the machine may be shared).
console.log(`verifying one signature (canonicalisation included), best of 3 rounds of ${verifications}:`);
const algs = ['ES256', 'EdDSA', 'PS256'] as const;
const setups = await Promise.all(
  algs.map(async (alg) => {
    const k = await key(alg, `bench-${alg}`);
    const verifier = createSignatureVerifier({
      configured: true,
      fingerprint: 'bench',
      lookup: async (kid) => ({ keys: kid === k.signing.kid ? [{ kid, jwk: k.publicJwk, source: 'bench' }] : [] }),
    });
    return { alg, verifier, card: await signCard(benchCard('Bench Agent', 'https://bench.example.org/a2a'), k.signing), best: Infinity };
  }),
);
for (let round = 0; round < 3; round++) {
  for (const setup of setups) {
    for (let i = 0; i < 50; i++) await setup.verifier.verifyAgentCard(setup.card, '1.0');
    const started = performance.now();
    for (let i = 0; i < verifications; i++) await setup.verifier.verifyAgentCard(setup.card, '1.0');
    setup.best = Math.min(setup.best, performance.now() - started);
  }
}
for (const setup of setups) console.log(`  ${setup.alg.padEnd(6)} ${perOp(setup.best, verifications)} per card`);

// 2 and 3. A registry core on SQLite in a temp dir.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-signatures-'));
const jwksFile = path.join(dir, 'jwks.json');
const [current, next] = await Promise.all([key('ES256', 'bench-current'), key('ES256', 'bench-next')]);
fs.writeFileSync(jwksFile, JSON.stringify({ keys: [current.publicJwk] }));
const config = loadConfig({ REGISTRY_DATA_DIR: dir, REGISTRY_TOKENS: 'admin:bench-admin-token-0123456789', REGISTRY_TRUSTED_KEYS: jwksFile, LOG_LEVEL: 'silent' });
const core = await buildRegistry(config, createLogger('silent'));
const admin = { principal: 'admin', isAdmin: true };
const subject = (card: Record<string, unknown>): Subject => {
  const documentText = JSON.stringify(card);
  return { type: 'agent-card', card, documentText, sizeBytes: Buffer.byteLength(documentText) };
};

async function registerAll(label: string, make: (i: number) => Promise<Record<string, unknown>>): Promise<void> {
  const cards = await Promise.all(Array.from({ length: entries }, (_, i) => make(i)));
  const started = performance.now();
  // 16 at a time, as concurrent clients would (group commit batches them).
  for (let i = 0; i < cards.length; i += 16) await Promise.all(cards.slice(i, i + 16).map((c) => core.service.register(subject(c), admin)));
  const ms = performance.now() - started;
  console.log(`  ${label.padEnd(9)} ${perOp(ms, entries)} per registration (${((entries / ms) * 1000).toFixed(0)}/s)`);
}

console.log(`\nregistering ${entries} cards through the service (SQLite, durable, 16 concurrent):`);
await registerAll('unsigned', async (i) => benchCard(`Plain ${i}`, `https://plain-${i}.example.org/a2a`));
await registerAll('signed', (i) => signCard(benchCard(`Signed ${i}`, `https://signed-${i}.example.org/a2a`), current.signing));

// 3. The trust roots change: every signed card is checked again, and each whose verdict changed is written and published.
await core.signatureReevaluation.idle();
fs.writeFileSync(jwksFile, JSON.stringify({ keys: [next.publicJwk] }));
const started = performance.now();
await core.trustRoots.reload();
await core.signatureReevaluation.idle();
const ms = performance.now() - started;
const verified = (await core.service.list({ filter: { verified: true }, pageSize: 1 }, { isAdmin: true, principal: 'admin' })).entries.length;
console.log(`\nkey removed: ${entries} signed of ${2 * entries} entries re-evaluated (and unverified) in ${(ms / 1000).toFixed(2)} s (${perOp(ms, entries)} per signed entry); verified left: ${verified}`);

await core.close();
fs.rmSync(dir, { recursive: true, force: true });
