/**
 * `a2a-registry keygen`: a new signing key pair for agent cards. Writes the private JWK (mode
 * 0600; never over an existing file without --force) and the public key into a JWKS file —
 * created, or with the new key added, so that a key set can hold the old and the new key while
 * rotating. The JWKS is what a registry operator trusts (REGISTRY_TRUSTED_KEYS) or what the
 * publisher serves at a URL the operator allow-lists (REGISTRY_TRUSTED_JKU).
 *
 * Exit code: 0 written, 1 a file could not be written or the JWKS file is not a key set, 2 usage
 * (a private key file, or a key with that kid in the JWKS, in the way without --force too).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Command, Option } from 'commander';
import type { JWK } from 'jose';
import { KEYGEN_ALGORITHMS, generateSigningKey, type KeygenAlgorithm } from '../../trust/jwks.js';
import { LocalFileError, readJsonFile, stageJsonFile } from '../local-json.js';
import { reportOfflineFailure } from '../offline-failure.js';
import { keyId } from '../key-options.js';
import { EXIT_OK, EXIT_USAGE, defaultOutput, printJson, styles } from '../output.js';

interface KeygenOptions {
  alg: KeygenAlgorithm;
  kid?: string;
  private: string;
  jwks: string;
  force: boolean;
  json: boolean;
}

/**
 * The keys of an existing JWKS file the new key joins. A key with the same kid is replaced only
 * with `force`: every card signed with it would stop verifying (signatures name their key by kid).
 */
async function existingKeys(file: string, kid: string, force: boolean): Promise<JWK[]> {
  if (!fs.existsSync(file)) return [];
  const { value } = await readJsonFile(file);
  const keys = typeof value === 'object' && value !== null && Array.isArray((value as { keys?: unknown }).keys) ? ((value as { keys: JWK[] }).keys) : undefined;
  if (!keys) throw new LocalFileError(`${file} exists and is not a JSON Web Key Set ({"keys": [...]}); choose another --jwks file`);
  if (!force && keys.some((k) => k.kid === kid)) {
    throw new LocalFileError(
      `${file} already holds a key with kid "${kid}": replacing it would make every card signed with that key fail to verify. Choose another --kid (or leave it out), or pass --force to replace it`,
      EXIT_USAGE, // a key in the way without --force, as a file is
      'USAGE',
    );
  }
  return keys.filter((k) => k.kid !== kid);
}

/** The file a path names, through symbolic links where it exists. */
function fileOf(file: string): string {
  const resolved = path.resolve(file);
  try {
    return fs.realpathSync(resolved);
  } catch {
    return resolved;
  }
}

export async function runKeygen(options: KeygenOptions): Promise<number> {
  const out = defaultOutput();
  const s = styles(out.color);
  try {
    // The public key set is written after the private key: into the same file it would replace
    // the private key, which would be lost while the output says where to find it.
    if (fileOf(options.private) === fileOf(options.jwks)) {
      throw new LocalFileError(`--private and --jwks both name ${options.jwks}: the public key set would overwrite the private key. Give them different files`, EXIT_USAGE, 'USAGE');
    }
    const { privateJwk, publicJwk } = await generateSigningKey(options.alg, options.kid);
    const kid = publicJwk.kid!;
    const keys = [...(await existingKeys(options.jwks, kid, options.force)), publicJwk];
    // Both files are written in full before either is put in place: a key set that cannot be
    // written (a full disk, a quota) then leaves the private key as it was, the one --force
    // would have replaced too, whose cards still verify against the key set as it still is.
    const privateKey = await stageJsonFile(options.private, privateJwk, { secret: true, overwrite: options.force, revertible: true });
    try {
      const keySet = await stageJsonFile(options.jwks, { keys }, { overwrite: true });
      try {
        await privateKey.commit();
        await keySet.commit().catch(async (err: unknown) => {
          // A private key whose public half was not put in place is of no use, and it replaced
          // the old one (--force), whose cards verify against the key set as it still is: put
          // the old one back (or remove the new file, which would stop the next attempt).
          await privateKey.revert();
          throw err;
        });
      } finally {
        await keySet.discard();
      }
    } finally {
      await privateKey.discard();
    }
    if (options.json) {
      printJson(out, { kid, alg: options.alg, privateKey: options.private, jwks: options.jwks, keys: keys.length });
    } else {
      out.out(
        `${s.green('✓ key')} ${s.bold(kid)} (${options.alg})\n` +
          `  private key: ${options.private} ${s.dim('(keep it secret: it signs your cards)')}\n` +
          `  public keys: ${options.jwks} ${s.dim(`(${keys.length} key${keys.length === 1 ? '' : 's'}; give it to registry operators, or publish it)`)}\n` +
          `  sign a card: a2a-registry sign agent-card.json --key ${options.private}\n`,
      );
    }
    return EXIT_OK;
  } catch (err) {
    return reportOfflineFailure(err, 'no key written', out, options.json);
  }
}

export function register(program: Command): void {
  program
    .command('keygen')
    .description('make a key pair for signing agent cards: a private JWK and a public JWKS')
    .addOption(new Option('--alg <alg>', 'signature algorithm').choices([...KEYGEN_ALGORITHMS]).default('ES256'))
    .addOption(new Option('--kid <kid>', 'key id (default: the key\'s RFC 7638 thumbprint)').argParser(keyId))
    .option('--private <file>', 'where to write the private key (mode 0600)', 'signing-key.jwk.json')
    .option('--jwks <file>', 'the public key set to create, or to add the new key to', 'jwks.json')
    .option('--force', 'replace an existing private key file, and a key with the same kid in the JWKS', false)
    .option('--json', 'print the result as JSON', false)
    .addHelpText(
      'after',
      '\nExit status: 0 written, 1 a file could not be written or --jwks is not a key set, 2 usage (also: the --private file,\n' +
        'or a key with that kid in --jwks, already there without --force).\n' +
        'Rotating keys: run keygen again with the same --jwks (both keys are then published), sign with both, and drop the old one later.',
    )
    .action(async (options: KeygenOptions) => {
      process.exitCode = await runKeygen(options);
    });
}
