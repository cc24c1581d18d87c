/**
 * `a2a-registry validate <file>...`: the registry's own checks, offline. Each file is an A2A
 * agent card, an MCP toolspec ({"tools": [...]}) or a stored MCP server document
 * ({"mcpServer": {...}, "toolspec": {...}}); the kind is detected from the content.
 *
 * Sizes are measured as the registry measures an uploaded file: its bytes (for a combined
 * MCP document, the compact serialisation of its toolspec, as for a data part).
 * The --mcp-* options give a toolspec its server, and are laid over a stored document's, as
 * `register` takes them (./mcp-server-options.ts): beside them a file is the toolspec they go
 * with, and an agent card is a usage error, not checked as if they were not there.
 * Exit code: 0 when every file is valid, 1 when any is invalid or not JSON (its line and column
 * are printed), 2 when a file cannot be read, or on usage errors.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Finding } from '../../contract/types.js';
import { isObject } from '../../lib/json.js';
import { compactJsonBytes, createDocumentValidator, type DocumentValidator, type Verdict } from '../../validation/index.js';
import { FileTooLarge, MAX_DOCUMENT_FILE_BYTES, inputName, readBounded } from '../bounded-read.js';
import { JsonSource, JsonSyntaxError, TEXT_AFTER_VALUE, type SourceLocation } from '../json-source.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, defaultOutput, formatFindings, printJson, styles, typedMessage, withLocation, type Locate } from '../output.js';
import { NEEDS_SERVER, ServerOptionsMisplaced, documentKindBeside, locateServerOptions, mcpServerOptions, serverFromOptions, serverOver, type McpServerOptions } from '../mcp-server-options.js';
import { nonEmpty } from '../option-values.js';
import { DEFAULT_MAX_BYTES, misshapenDocument, readProblem, type DocumentKind } from '../document-kind.js';

export interface ValidateOptions extends McpServerOptions {
  json: boolean;
  maxBytes: number;
  warnInsecureHttp: boolean;
  /** The names of --mcp-name and --mcp-url before they were register's (hidden; README documented them). */
  serverName?: string;
  serverUrl?: string;
}

/** A command line validate cannot run as given (a toolspec given half its server; see also ServerOptionsMisplaced). */
class UsageError extends Error {}

/** Where output goes; injectable for tests. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  color: boolean;
}

export type FileResult =
  | ({ file: string; documentKind: DocumentKind } & Verdict)
  | { file: string; valid: false; error: { code: 'READ_ERROR' | 'TOO_LARGE' | 'NOT_JSON'; message: string; location?: SourceLocation; hint?: string } };

/** A toolspec validated on its own still needs server metadata; this one is never reported on. */
const STANDALONE_SERVER = { name: 'toolspec', url: 'https://mcp.server.invalid/mcp' };

/**
 * A document of the kind register would send it as, beside these options (documentKindBeside).
 * `text`: the file's, checked for what only it shows (a key given twice, a number rounded), as
 * the registry checks an uploaded file's.
 */
function validateDocument(validator: DocumentValidator, kind: DocumentKind, doc: unknown, bytes: number, opts: McpServerOptions, text: string): Verdict {
  if (kind === 'agent') return validator.validateAgentCard(doc, bytes, { text, at: '' });
  if (kind === 'mcp-server' && isObject(doc)) {
    // The options over the document's own server, as register sends it.
    return validator.validateMcpServer(serverOver(doc.mcpServer, opts), doc.toolspec, compactJsonBytes(doc.toolspec), { text, at: '' });
  }
  // A bare toolspec: the file is the document's /toolspec.
  const written = { text, at: '/toolspec' };
  const server = serverFromOptions(opts);
  if (Object.keys(server).length > 0) {
    // As register refuses it: half a server is a usage mistake, not an empty name to report.
    if (opts.mcpName === undefined || opts.mcpUrl === undefined) throw new UsageError(NEEDS_SERVER);
    return validator.validateMcpServer(server, doc, bytes, written);
  }
  // Without --mcp-name/--mcp-url only the toolspec is checked.
  const verdict = validator.validateMcpServer(STANDALONE_SERVER, doc, bytes, written);
  const keep = (f: Finding): boolean => !f.path.startsWith('/mcpServer');
  return { ...verdict, errors: verdict.errors.filter(keep), warnings: verdict.warnings.filter(keep) };
}

interface Checked {
  result: FileResult;
  /** Places the findings in the file, for a document that parsed. */
  locate?: Locate;
}

async function validateFile(validator: DocumentValidator, given: string, opts: ValidateOptions): Promise<Checked> {
  // Named as register and sign name it ("standard input", not "-"), in messages and --json alike.
  const file = inputName(given);
  let buf: Buffer;
  try {
    // Past the limit it is too large whatever it holds: read no more of it (`validate /dev/zero`).
    buf = await readBounded(given, Math.max(MAX_DOCUMENT_FILE_BYTES, opts.maxBytes));
  } catch (err) {
    if (err instanceof FileTooLarge) return { result: { file, valid: false, error: { code: 'TOO_LARGE', message: err.message } } };
    return { result: { file, valid: false, error: { code: 'READ_ERROR', message: readProblem(file, err) } } };
  }
  let source: JsonSource;
  try {
    // A UTF-8 byte order mark is tolerated when parsing; it still counts towards the size.
    source = JsonSource.parse(file, buf);
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    const hint = moreThanOneDocument(err) ? manyDocumentsHint(given) : undefined;
    return { result: { file, valid: false, error: { code: 'NOT_JSON', message: err.message, location: err.location, ...(hint ? { hint } : {}) } } };
  }
  // Half an MCP server document, or its tools beside its server: said as register and import say
  // it, not as a card's eight missing members, nor "valid" for tools beside a server they ignore.
  const misshapen = misshapenDocument(source.value);
  if (misshapen) {
    const verdict: Verdict = { valid: false, kind: 'mcp-server', errorCode: 'VALIDATION_FAILED', message: misshapen.message, sizeBytes: buf.length, errors: misshapen.details, warnings: [] };
    return { result: { file, documentKind: 'mcp-server', ...verdict }, locate: (p) => source.locate(p) };
  }
  // A server field an option gave is named at the option (`--mcp-url: ...`), not in the file; an old name as typed.
  const oldNames = { ...(opts.serverName !== undefined ? { '--mcp-name': '--server-name' } : {}), ...(opts.serverUrl !== undefined ? { '--mcp-url': '--server-url' } : {}) };
  const kind = documentKindBeside(file, source.value, opts, 'validate', oldNames);
  const verdict = validateDocument(validator, kind, source.value, buf.length, opts, source.text);
  const locate = locateServerOptions(opts, (p) => source.locate(p), oldNames);
  if (kind !== 'mcp-toolspec') return { result: { file, documentKind: kind, ...inTypedTerms(verdict, locate) }, locate };
  return { result: { file, documentKind: kind, ...inTypedTerms(relativeToToolspec(verdict), locate) }, locate };
}

/**
 * A file that holds a JSON value, then another on a line of its own: JSON lines (one document per
 * line), or documents written one after another. Said as "unexpected text after the JSON value"
 * at the first character of the second, with nothing on what to do.
 */
function moreThanOneDocument(err: JsonSyntaxError): boolean {
  return err.reason === TEXT_AFTER_VALUE && err.position?.column === 1;
}

function manyDocumentsHint(given: string): string {
  const split = given === '-' ? '' : `: split -l 1 ${given} card- && a2a-registry validate card-*`;
  return `validate checks one document per file, and this one holds more, one per line (JSON lines?): give each its own file${split}`;
}

/**
 * The validator reports paths into the stored document {mcpServer, toolspec}; for a bare
 * toolspec file, point into the file itself ("/tools/0/name", not "/toolspec/tools/0/name").
 */
function relativeToToolspec(v: Verdict): Verdict {
  const path = (p: string): string => (p === '/toolspec' ? '' : p.startsWith('/toolspec/') ? p.slice('/toolspec'.length) : p);
  const text = (s: string): string => s.replaceAll('/toolspec/', '/').replace('The MCP server registration is', 'The toolspec is');
  const finding = (f: Finding): Finding => ({ ...f, path: path(f.path), message: text(f.message) });
  const out: Verdict = { ...v, errors: v.errors.map(finding), warnings: v.warnings.map(finding) };
  if (v.message !== undefined) out.message = text(v.message);
  return out;
}

/** The verdict's message names a finding of an option's value as the option ("--mcp-url: must be ..."), as its finding is. */
function inTypedTerms(v: Verdict, locate: Locate): Verdict {
  return v.message === undefined ? v : { ...v, message: typedMessage(v.message, [...v.errors, ...v.warnings], locate) };
}

// --- human output --------------------------------------------------------------------------

function describe(r: Extract<FileResult, { documentKind: DocumentKind }>): string {
  const what =
    r.documentKind === 'agent'
      ? r.generation
        ? `A2A v${r.generation} agent card`
        : 'agent card'
      : r.documentKind === 'mcp-toolspec'
        ? 'MCP toolspec'
        : 'MCP server document';
  return `${what}, ${r.sizeBytes.toLocaleString('en-US')} bytes`;
}

export function formatHuman(checked: readonly Checked[], color: boolean): string {
  const s = styles(color);
  let out = '';
  for (const { result: r, locate } of checked) {
    if ('error' in r) {
      // "card.json:3:9: not valid JSON: ..." or "cannot read card.json: no such file".
      out += `${s.red(r.error.code === 'NOT_JSON' ? '✗ invalid' : r.error.code === 'TOO_LARGE' ? '✗ too large' : '✗ unreadable')} ${r.error.message}\n`;
      if (r.error.hint) out += `  ${s.dim('hint:')} ${r.error.hint}\n`;
      continue;
    }
    out += r.valid ? `${s.green('✓ valid')}   ${s.bold(r.file)} (${describe(r)})\n` : `${s.red('✗ invalid')} ${s.bold(r.file)} (${describe(r)}): ${r.errorCode}\n  ${r.message}\n`;
    out += formatFindings(r.errors, 'error', s, locate) + formatFindings(r.warnings, 'warning', s, locate);
  }
  const invalid = checked.filter((c) => !c.result.valid).length;
  if (checked.length > 1) out += `\n${checked.length - invalid} valid, ${invalid} invalid\n`;
  return out;
}

/** The --json form of a result: each finding with its place in the file. */
function jsonResult({ result, locate }: Checked): FileResult {
  if ('error' in result || !locate) return result;
  return { ...result, errors: result.errors.map((f) => withLocation(f, locate)), warnings: result.warnings.map((f) => withLocation(f, locate)) };
}

// --- command -------------------------------------------------------------------------------

/** Exit status: 2 when a file cannot be read (a usage mistake), else 1 when any document is invalid, else 0. */
export async function runValidate(files: string[], opts: ValidateOptions, io: Io): Promise<number> {
  const validator = createDocumentValidator({ maxDocumentBytes: opts.maxBytes, warnInsecureHttp: opts.warnInsecureHttp, compileEagerly: false });
  const given: ValidateOptions = { ...opts, mcpName: opts.mcpName ?? opts.serverName, mcpUrl: opts.mcpUrl ?? opts.serverUrl };
  const checked: Checked[] = [];
  try {
    for (const file of files) checked.push(await validateFile(validator, file, given));
  } catch (err) {
    if (!(err instanceof UsageError || err instanceof ServerOptionsMisplaced)) throw err;
    if (opts.json) printJson(io, { error: { code: 'USAGE', message: err.message } });
    io.err(`a2a-registry: ${err.message}\n`);
    return EXIT_USAGE;
  }
  const results = checked.map((c) => c.result);
  if (opts.json) {
    io.out(JSON.stringify({ valid: results.every((r) => r.valid), maxBytes: opts.maxBytes, results: checked.map(jsonResult) }, null, 2) + '\n');
  } else {
    io.out(formatHuman(checked, io.color));
  }
  if (results.some((r) => 'error' in r && r.error.code === 'READ_ERROR')) return EXIT_USAGE;
  return results.every((r) => r.valid) ? EXIT_OK : EXIT_FAILED;
}

function positiveInt(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value.trim())) throw new InvalidArgumentError('must be a positive whole number of bytes');
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('is too large');
  return n;
}

export function defaultIo(): Io {
  // The same writers as every command: colour on a TTY only, and text made safe for the terminal.
  const { out, err, color } = defaultOutput();
  return { out, err, color };
}

export function register(program: Command): void {
  const command = program
    .command('validate')
    .description('check A2A agent cards and MCP toolspecs offline, with the registry\'s own rules')
    .argument('<file...>', 'JSON files: agent cards, toolspecs ({"tools": [...]}) or {"mcpServer", "toolspec"} documents; "-" reads stdin')
    .option('--json', 'print machine-readable results', false)
    .addOption(new Option('--max-bytes <n>', 'size limit of one document, in bytes').argParser(positiveInt).default(DEFAULT_MAX_BYTES))
    .option('--warn-insecure-http', 'warn about plain-http URLs', false);
  mcpServerOptions(command, {
    name: 'MCP server name to validate with a toolspec (over a {"mcpServer", "toolspec"} document\'s)',
    url: 'MCP server URL to validate with a toolspec (over a document\'s)',
    description: 'MCP server description (over a document\'s)',
    version: 'MCP server version (over a document\'s)',
  })
    // Their names before validate took register's; kept for scripts that use them.
    .addOption(new Option('--server-name <name>').hideHelp().argParser(nonEmpty).conflicts('mcpName'))
    .addOption(new Option('--server-url <url>').hideHelp().argParser(nonEmpty).conflicts('mcpUrl'))
    .addHelpText(
      'after',
      '\nExit status: 0 when every file is valid, 1 when any is invalid or not JSON, 2 when a file cannot be read or on usage errors.\n' +
        'Examples:\n  a2a-registry validate .well-known/agent-card.json\n  a2a-registry validate --json --mcp-url https://mcp.acme.dev/mcp --mcp-name files toolspec.json',
    )
    .action(async (files: string[], options: ValidateOptions) => {
      process.exitCode = await runValidate(files, options, defaultIo());
    });
}
