/**
 * Settings that name a file (REGISTRY_TRUSTED_KEYS, REGISTRY_SIGNING_KEY, REGISTRY_RETIRED_SIGNING_KEYS, REGISTRY_SYNONYMS,
 * REGISTRY_ADMIN_TOKEN_FILE, DATABASE_URL_FILE): one rule for what their errors say. A file that cannot be read or
 * whose content is not what the setting takes is invalid configuration like any other bad value
 * (exit 2), told in one line naming the variable, the file, what is wrong and how to fix it.
 * They are read where they are used (some after the port listens, some again at runtime), so the
 * error is a ConfigError of its own, which the entry points tell as they tell loadConfig's.
 */
import fs from 'node:fs';
import { ConfigError } from './config-error.js';

/** What each file setting names, as the fix of an error about it says. */
const FILE_SETTINGS = {
  REGISTRY_TRUSTED_KEYS: 'a JWKS file of the public keys whose card signatures are trusted ({"keys": [...]})',
  REGISTRY_SIGNING_KEY: 'a private JWK file (EC, OKP or RSA) to sign the registry\'s card with (`a2a-registry keygen` makes one)',
  REGISTRY_RETIRED_SIGNING_KEYS: 'a JWKS file of the public keys the registry signed with before ({"keys": [...]}, each with an optional "exp")',
  REGISTRY_SYNONYMS: 'a synonym file (Solr synonyms.txt format: "billing, invoicing" or "tax => vat" per line)',
  REGISTRY_ADMIN_TOKEN_FILE: 'a file whose first line is the admin token',
  DATABASE_URL_FILE: 'a file whose first line is the PostgreSQL URL (postgres://user:password@host:5432/database)',
} as const;

export type FileSetting = keyof typeof FILE_SETTINGS;

/** A file setting whose file cannot be used. `problem` is the line without "invalid configuration: " (for a log line when a reload fails). */
export class SettingFileError extends ConfigError {
  readonly problem: string;
  constructor(problem: string) {
    super(`invalid configuration: ${problem}`);
    this.problem = problem;
  }
}

/** One line: a message that quotes a file's text (a parser's) would otherwise run over several. */
const oneLine = (text: string): string => text.replace(/\s*[\r\n]+\s*/g, ' ').trim();

/** Why a file could not be read, in words (the system's errno names only the call). */
function unreadable(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
      return 'does not exist';
    case 'EISDIR':
      return 'is a directory, not a file';
    case 'EACCES':
    case 'EPERM':
      return 'cannot be read by this user (permission denied)';
    case 'ENOTDIR':
      return 'is not below a directory (a part of its path is a file)';
    default:
      return `cannot be read (${oneLine(error.message)})`;
  }
}

/** The error for `variable`'s `file`: `wrong` says what is wrong (naming the file, or it is named first). */
export function settingFileError(variable: FileSetting, file: string, wrong: string, { read = false } = {}): SettingFileError {
  const what = oneLine(wrong);
  const said = what.includes(file) ? what : `${file} ${what}`;
  const fix = read ? `set ${variable} to the path of ${FILE_SETTINGS[variable]}` : `correct it, or set ${variable} to the path of ${FILE_SETTINGS[variable]}`;
  return new SettingFileError(`${variable}: ${said}; ${fix}`);
}

/** The text of `variable`'s `file`; a SettingFileError when it cannot be read. */
export function readSettingFile(variable: FileSetting, file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    throw settingFileError(variable, file, unreadable(error as NodeJS.ErrnoException), { read: true });
  }
}

/**
 * The JSON in `variable`'s `file`. The parser's message is not shown: it quotes the text, a
 * private key's included; where the text stops being JSON is.
 */
export function readSettingJson(variable: FileSetting, file: string): unknown {
  const text = readSettingFile(variable, file);
  try {
    return JSON.parse(text);
  } catch (error) {
    if (text.trim() === '') throw settingFileError(variable, file, 'is empty, not JSON');
    const at = /line \d+ column \d+/.exec((error as Error).message)?.[0];
    throw settingFileError(variable, file, `is not JSON${at ? ` (at ${at})` : ''}`);
  }
}

/** Runs `parse`, telling whatever it throws as an error of `variable`'s `file`. */
export async function parseSettingFile<T>(variable: FileSetting, file: string, parse: () => T | Promise<T>): Promise<T> {
  try {
    return await parse();
  } catch (error) {
    if (error instanceof SettingFileError) throw error;
    throw settingFileError(variable, file, (error as Error).message);
  }
}

/** As parseSettingFile, for a parser that does not wait. */
export function parseSettingFileSync<T>(variable: FileSetting, file: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof SettingFileError) throw error;
    throw settingFileError(variable, file, (error as Error).message);
  }
}
