/**
 * `a2a-registry verify <card> --jwks <file>`: checks every signature of an agent card against the
 * public keys of a JWKS file, as a registry that trusts that file would, and says which one
 * verified, or why none did.
 *
 * Exit code: 0 a signature verified and none is invalid (the registry would list the card as
 * verified), 1 otherwise (or the card or the key set cannot be used), 2 usage or a file that cannot
 * be read.
 */
import { Command } from 'commander';
import type { Finding, SignatureStatus } from '../../contract/types.js';
import { isObject, quote, resolvePointer, type JsonObject } from '../../lib/json.js';
import { isSupersetCard, supersetOnlyPaths, v10CardOfSuperset } from '../../protocol/legacy-card.js';
import { parseJwks } from '../../trust/jwks.js';
import { createSignatureVerifier, type TrustedKeys } from '../../validation/signature.js';
import { checkCard } from '../card-checks.js';
import { reportOfflineFailure } from '../offline-failure.js';
import { LocalFileError, oneFromStdin, readJsonFile } from '../local-json.js';
import { EXIT_FAILED, EXIT_OK, defaultOutput, formatFindings, printJson, styles, type Styles } from '../output.js';

interface VerifyOptions {
  jwks: string;
  json: boolean;
}

function statusLine(st: SignatureStatus, i: number, s: Styles): string {
  const who = `signature ${i}${st.kid ? `: kid ${s.bold(st.kid)}` : ''}${st.alg ? ` (${st.alg})` : ''}`;
  if (st.status === 'verified') return `  ${s.green('✓ verified   ')} ${who}\n`;
  const label = st.status === 'invalid' ? s.red('✗ invalid    ') : s.yellow('? unknown key');
  return `  ${label} ${who}\n                ${st.reason ?? ''}\n`;
}

/**
 * The v0.3 members of a superset card, which its signatures (over the v1.0 card inside it) do not
 * cover: one `unsigned-field` warning each, as the registry warns about a field outside the v1.0
 * card. `url` and `additionalInterfaces` are what v0.3 clients dial: changed, they send those
 * clients elsewhere while the signature still verifies, so each says whether it is one of the
 * signed interface URLs.
 */
export function supersetWarnings(superset: JsonObject, signed: JsonObject): Finding[] {
  const signedUrls = new Set((Array.isArray(signed.supportedInterfaces) ? signed.supportedInterfaces : []).map((i: unknown) => (isObject(i) ? i.url : undefined)));
  const uncovered = "this v0.3 field is not covered by the card's signature, which covers the v1.0 card inside the superset";
  return supersetOnlyPaths(superset).map((path): Finding => {
    const value = resolvePointer(superset, path);
    if (path === '/url' || path.startsWith('/additionalInterfaces/')) {
      const url = path === '/url' ? value : isObject(value) ? value.url : undefined;
      const unsignedUrl = signedUrls.has(url) ? '' : `; ${quote(url)} is none of the signed card's interface URLs`;
      return {
        path,
        rule: 'unsigned-field',
        message: `${uncovered}: ${path === '/url' ? 'it is the URL' : 'its url is one'} v0.3 clients dial, so it can be changed to send them elsewhere and the signature still verifies${unsignedUrl}`,
        hint: 'v0.3 clients cannot rely on it: trust only the signed supportedInterfaces (fetch the card with A2A-Version: 1.0), or check that this URL is one of them.',
      };
    }
    return {
      path,
      rule: 'unsigned-field',
      message: `${uncovered}: v0.3 clients read it${path === '/preferredTransport' || path === '/protocolVersion' ? ' to call the url' : ''}, and it can be changed without breaking the signature`,
      hint: 'v0.3 clients cannot rely on it: check it against the signed v1.0 card (fetch the card with A2A-Version: 1.0).',
    };
  });
}

export async function runVerify(file: string, options: VerifyOptions): Promise<number> {
  const out = defaultOutput();
  const s = styles(out.color);
  try {
    oneFromStdin({ 'the card': file, '--jwks': options.jwks });
    const source = await readJsonFile(file);
    // What a registry serves to clients that send no A2A-Version (this one's own card, the
    // SDK's): its signatures cover the v1.0 card inside it, which is what is checked.
    const superset = isSupersetCard(source.value);
    const { card, generation } = checkCard(source, superset ? v10CardOfSuperset(source.value) : source.value);
    if (superset && !options.json) {
      out.err(`${s.yellow('note')} ${file} is a superset card (v1.0 with the v0.3 fields beside it, as served to clients that send no A2A-Version): checking the v1.0 card inside it, which is what its signatures cover: its v0.3 fields are not (register the v1.0 card: a registry refuses a card that mixes generations)\n`);
    }
    let parsed;
    try {
      parsed = parseJwks((await readJsonFile(options.jwks)).value, options.jwks);
    } catch (err) {
      if (err instanceof LocalFileError) throw err;
      throw new LocalFileError((err as Error).message);
    }
    for (const problem of parsed.problems) out.err(`${s.yellow('warning')} ${problem}\n`);
    const trust: TrustedKeys = {
      configured: true,
      fingerprint: 'cli',
      lookup: async (kid, jku) => ({
        // A verified signature names the key set of its key: here, the file given.
        keys: parsed.keys.filter((k) => k.kid === kid).map((k) => ({ ...k, jwks: options.jwks })),
        note: jku ? `verify does not fetch its jku ${JSON.stringify(jku)}: pass that key set with --jwks` : undefined,
      }),
    };
    const { verification, warnings: signatureWarnings } = await createSignatureVerifier(trust).verifyAgentCard(card, generation);
    // What the signatures cover is the v1.0 card: the superset's v0.3 part is named, field by field.
    const warnings = superset && verification.signatures.length > 0 ? [...signatureWarnings, ...supersetWarnings(source.value as JsonObject, card)] : signatureWarnings;
    const ok = verification.verified && !verification.signatures.some((st) => st.status === 'invalid');
    if (options.json) {
      const { keyset: _keyset, ...shown } = verification;
      printJson(out, { ...shown, valid: ok, warnings });
    } else {
      const head = ok
        ? `${s.green('✓ verified')} ${file}: by kid ${s.bold(verification.kid ?? '')} (${verification.alg ?? ''})\n`
        : verification.signatures.length === 0
          ? `${s.red('✗ not verified')} ${file}: the card has no signatures\n`
          : `${s.red('✗ not verified')} ${file}: ${verification.signatures.some((st) => st.status === 'invalid') ? 'a signature is invalid (a registry refuses the card)' : 'no signature is by a key in ' + options.jwks}\n`;
      out.out(head + verification.signatures.map((st, i) => statusLine(st, i, s)).join('') + formatFindings(warnings, 'warning', s));
    }
    return ok ? EXIT_OK : EXIT_FAILED;
  } catch (err) {
    return reportOfflineFailure(err, 'not verified', out, options.json);
  }
}

export function register(program: Command): void {
  program
    .command('verify')
    .description("check an agent card's signatures against a JWKS file, as a registry trusting it would")
    .argument('<card>', 'the signed agent card (JSON); "-" reads stdin')
    .requiredOption('--jwks <file>', 'the public keys to trust (a JWKS, as keygen writes it)')
    .option('--json', 'print the result as JSON', false)
    .addHelpText('after', '\nExit status: 0 a signature verified and none is invalid, 1 not verified (or unusable files), 2 usage or unreadable file.')
    .action(async (file: string, options: VerifyOptions) => {
      process.exitCode = await runVerify(file, options);
    });
}
