/**
 * `a2a-registry sign <card> --key <jwk>`: signs an agent card (A2A §8.4) with a private JWK and
 * writes the signed card (to stdout, or --out). The signature covers the card's canonical form,
 * exactly as the registry verifies it (with --sdk-form also the SDKs' form, for their verifiers);
 * signatures by other keys are kept (key rotation), those by the same kid are replaced. The card is checked first: signing an invalid card helps nobody.
 *
 * Exit code: 0 signed, 1 the card is invalid, not JSON, or cannot be written (or the key cannot
 * sign), 2 usage, a file that cannot be read, or an --out file in the way without --force.
 */
import { Command, Option } from 'commander';
import { signCard } from '../../trust/card-signing.js';
import { parseSigningKey } from '../../trust/jwks.js';
import { ACCEPTED_ALGORITHMS } from '../../validation/signature.js';
import { checkCard } from '../card-checks.js';
import { reportOfflineFailure } from '../offline-failure.js';
import { keyId, jwksUrl } from '../key-options.js';
import { LocalFileError, oneFromStdin, readJsonFile, writeJsonFile } from '../local-json.js';
import { EXIT_OK, countOf, defaultOutput, printJson, styles } from '../output.js';

interface SignOptions {
  key: string;
  kid?: string;
  jku?: string;
  out?: string;
  force: boolean;
  json: boolean;
  sdkForm: boolean;
}

export async function runSign(file: string, options: SignOptions): Promise<number> {
  const out = defaultOutput();
  const s = styles(out.color);
  try {
    oneFromStdin({ 'the card': file, '--key': options.key });
    const { card } = checkCard(await readJsonFile(file));
    let key;
    try {
      key = await parseSigningKey((await readJsonFile(options.key)).value, options.key, ACCEPTED_ALGORITHMS, options.kid);
    } catch (err) {
      if (err instanceof LocalFileError) throw err;
      throw new LocalFileError((err as Error).message);
    }
    const signed = await signCard(card, key, { jku: options.jku, sdkCompatible: options.sdkForm });
    if (options.out) {
      await writeJsonFile(options.out, signed, { overwrite: options.force || options.out === file });
      const count = (signed.signatures as unknown[]).length;
      if (options.json) printJson(out, { signed: options.out, kid: key.kid, alg: key.alg, signatures: count });
      out.err(`${s.green('✓ signed')} ${options.out} with kid ${s.bold(key.kid)} (${key.alg}); ${countOf(count, 'signature')}\n`);
    } else {
      printJson(out, signed);
    }
    return EXIT_OK;
  } catch (err) {
    return reportOfflineFailure(err, 'not signed', out, options.json);
  }
}

export function register(program: Command): void {
  program
    .command('sign')
    .description('sign an agent card with a private JWK (see keygen); prints the signed card')
    .argument('<card>', 'the agent card (JSON); "-" reads stdin')
    .requiredOption('--key <file>', 'the private JWK to sign with')
    .addOption(new Option('--kid <kid>', "key id for the signature (default: the key's kid, or its thumbprint)").argParser(keyId))
    .addOption(new Option('--jku <url>', 'URL of your public JWKS, put in the signature as a hint (registries trust only their own roots)').argParser(jwksUrl))
    .option(
      '--sdk-form',
      'also sign the form @a2a-js/sdk 1.3 and a2a-python verify (they leave out empty values A2A §8.4.1 keeps: security requirements without scopes, "capabilities": {}, an extension\'s empty params), when it differs, so their verifiers accept the card too',
      false,
    )
    .option('-o, --out <file>', 'write the signed card here instead of stdout')
    .option('--force', 'replace an existing --out file', false)
    .option('--json', 'with --out, print {signed, kid, alg, signatures} (without it the signed card is the JSON printed); errors as {"error": {...}}', false)
    .addHelpText('after', '\nExit status: 0 signed, 1 invalid card or unusable key, 2 usage, unreadable file, or --out already there without --force.\nExample: a2a-registry sign agent-card.json --key signing-key.jwk.json -o agent-card.json')
    .action(async (file: string, options: SignOptions) => {
      process.exitCode = await runSign(file, options);
    });
}
