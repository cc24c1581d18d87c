/**
 * What a start refuses before the registry's modules load: settings found bad only once used (a
 * HOST that is no address of this machine; a GRPC_PORT in use; a signing key, trust or synonym
 * file that cannot be read or used; a data directory this user cannot write). main.ts and `a2a-registry serve` run startChecks between loadConfig and loading
 * run-server.ts, so such a typo is refused in a fifth of a second of CPU, not after the second
 * that loading the server takes (express, the SDK, storage, search). This module loads only what
 * the checks need.
 *
 * Each check is the start's own, made earlier, never a second rule: the signing key and the
 * synonyms are read here once and the registry is built with them (buildRegistry reads them
 * itself only when started without these checks: tests, tools); HOST is refused by the listen's
 * own error (./listen-error.ts) for a socket bound a moment on it, GRPC_PORT in use alike (as
 * the gRPC server's bind says it); the trusted keys file is read
 * by the function TrustRoots reads it with, which reads it again where it starts watching it, so
 * an edit made meanwhile (storage may take minutes to open) is not missed; SQLite's data
 * directory by what opening the database writes first (the directory, the lock file beside the
 * database), told as that opening tells it. What that made is removed if the start is refused
 * after all (SettingFiles.undoDataDirectory: PORT in use), so a typo leaves no new data directory.
 */
import net from 'node:net';
import type { RegistryConfig } from '../config/config.js';
import { ConfigError } from '../config/config-error.js';
import { parseSettingFileSync, readSettingFile } from '../config/setting-files.js';
import { grpcBindError } from '../grpc/bind-error.js';
import { Synonyms } from '../search/synonyms.js';
import { isPostgresUrl, sqliteFile } from '../storage/locations.js';
import { makeLockFile, removeMadeLockFile, type MadeLockFile } from '../storage/sqlite/lock-file.js';
import { cannotWriteDatabase } from '../storage/sqlite/unwritable.js';
import { loadRegistrySigningKey, type RegistrySigningKey } from '../trust/registry-signing-key.js';
import { readTrustedKeysFile } from '../trust/trust-roots.js';
import { listenError } from './listen-error.js';

/** The files settings name that the registry reads once, at start-up, as read. */
export interface SettingFiles {
  /** REGISTRY_SIGNING_KEY's key, with REGISTRY_RETIRED_SIGNING_KEYS' keys. */
  signingKey?: RegistrySigningKey;
  /** REGISTRY_SYNONYMS'. */
  synonyms?: Synonyms;
  /**
   * Removes what the checks made of SQLite's data directory (the directories, the lock file) that
   * storage has not written to since: run-server.ts calls it when the start is refused.
   */
  undoDataDirectory?: () => void;
}

/**
 * Refuses what can be refused before the registry's modules load (ConfigError; a data directory
 * that cannot be written, an Error: a start that failed); the files read, for startRegistry.
 */
export async function startChecks(config: RegistryConfig): Promise<SettingFiles> {
  await checkHost(config.host);
  if (config.grpc) await checkGrpcPort(config.host, config.grpc.port);
  const files = await readSettingFiles(config);
  const keysFile = config.trust.keysFile;
  if (keysFile !== undefined) {
    const { keys, problems } = readTrustedKeysFile(keysFile);
    const refusal = unverifiable(config, keys.length, problems);
    if (refusal) throw refusal;
  }
  // Last: a start refused for a file leaves the data directory untouched.
  if (isPostgresUrl(config.databaseUrl)) return files;
  const made = checkDataDirectory(sqliteFile(config.dataDir));
  return { ...files, undoDataDirectory: () => removeMadeLockFile(made) };
}

/** The database `file`'s directory and lock file made, as the store's opening makes them first (what was made); what stops that, said as the opening says it. */
function checkDataDirectory(file: string): MadeLockFile {
  try {
    return makeLockFile(file);
  } catch (error) {
    throw cannotWriteDatabase(file, error) ?? error;
  }
}

/**
 * The signing key and the synonyms, read before storage opens: a key that cannot sign, or
 * synonyms that cannot be read, stop start-up (invalid configuration, naming the variable and
 * the file) with nothing to undo and the data directory untouched.
 */
export async function readSettingFiles(config: RegistryConfig): Promise<SettingFiles> {
  const { signingKeyFile, retiredSigningKeysFile } = config.trust;
  const signingKey = signingKeyFile ? await loadRegistrySigningKey(signingKeyFile, retiredSigningKeysFile) : undefined;
  const synonymsFile = config.search.synonymsFile;
  if (!synonymsFile) return { signingKey };
  // Parse errors name the file and the line.
  const text = readSettingFile('REGISTRY_SYNONYMS', synonymsFile);
  return { signingKey, synonyms: parseSettingFileSync('REGISTRY_SYNONYMS', synonymsFile, () => Synonyms.parse(text, synonymsFile)) };
}

/**
 * REGISTRY_REQUIRE_VERIFIED with no trust root that can ever verify a card (a keys file of
 * `keys` usable keys, none, and no REGISTRY_TRUSTED_JKU) would hide every stored agent and refuse
 * every registration: invalid configuration, as the setting without any trust root is; the keys
 * file is reloaded when it changes, but a registry that starts hiding everything is not what its
 * operator meant. `problems`: why the file's keys were left out. Undefined when it may verify.
 */
export function unverifiable(config: RegistryConfig, keys: number, problems: readonly string[]): ConfigError | undefined {
  const file = config.trust.keysFile;
  if (keys > 0 || !config.trust.requireVerified || config.trust.jkuUrls.length > 0 || file === undefined) return undefined;
  const said = problems.map((p) => (p.startsWith(`${file}: `) ? p.slice(file.length + 2) : p));
  const why = said.length === 0 ? 'its "keys" list is empty' : `${said[0]}${said.length > 1 ? `, and ${said.length - 1} more left out` : ''}`;
  return new ConfigError(
    `invalid configuration: REGISTRY_REQUIRE_VERIFIED=true needs a key to verify cards with, and REGISTRY_TRUSTED_KEYS (${file}) holds no usable one (${why}), so every agent would be hidden and every registration refused: add a public EC, OKP or RSA key with a "kid" to the file, set REGISTRY_TRUSTED_JKU to allow-listed JWKS URLs, or unset REGISTRY_REQUIRE_VERIFIED`,
  );
}

/**
 * HOST as the listen takes it: a socket bound a moment to a port of the system's choosing on it
 * (resolved as the listen resolves it). A name no resolver knows, or an address of another
 * machine, is refused as the listen would refuse it; anything else (a resolver not answering just
 * now) is the listen's to say.
 */
async function checkHost(host: string): Promise<void> {
  const failed = await bindFailure(host, 0);
  if (!failed) return;
  const error = listenError(failed, host, 0);
  if (error instanceof ConfigError) throw error;
}

/** Why a socket could not listen on `host`:`port`; undefined when it could (it is closed again at once). */
async function bindFailure(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  const probe = net.createServer();
  const failed = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    probe.once('error', resolve);
    probe.listen(port, host, () => resolve(undefined));
  });
  if (!failed) await new Promise((resolve) => probe.close(resolve));
  return failed;
}

/**
 * GRPC_PORT as the gRPC server binds it (a node listener on HOST, as grpc-js's), bound a moment:
 * in use, or needing privileges, it is refused as that bind refuses it (grpc/bind-error.ts), before
 * storage opens. Found only by the bind (grpc-server.ts), once storage had opened, the refused
 * start left a new data directory with its database and a generated admin token. A probe, not
 * the listener itself: the gRPC server binds once the registry is built (its call guard and
 * health service need it); a port taken between the two is still refused there. Anything else
 * (a port of 0, an error of another kind) is the bind's to say.
 */
async function checkGrpcPort(host: string, port: number): Promise<void> {
  if (port === 0) return;
  const failed = await bindFailure(host, port);
  if (failed?.code === 'EADDRINUSE' || failed?.code === 'EACCES') throw grpcBindError(host, port, failed.message);
}
