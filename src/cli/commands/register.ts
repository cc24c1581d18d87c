/**
 * `a2a-registry register <file>`: registers (or updates) an A2A agent card, or an MCP server
 * from its toolspec, by sending the registry the file as a file part, as a peer agent would.
 * The registry measures and stores the bytes exactly as they are in the file.
 *
 * `register --url <url>` has the registry fetch the card itself (a base URL or the card's URL),
 * and `register --fetch-tools --mcp-name .. --mcp-url ..` has it list an MCP server's tools; the
 * registry then keeps the entry fresh from there.
 *
 * Exit code: 0 registered (created, updated or unchanged), 1 declined (or, with --dry-run, not
 * valid; or the file is not JSON, or holds a key given twice or a number JSON cannot hold, or is
 * a misshapen MCP server document (misshapenDocument), reported with its line and column before
 * anything is sent),
 * 2 usage (bad options, a file that cannot be read), 3 unreachable.
 */
import { Command } from 'commander';
import type { Finding, RegistrationResult, ValidationResultBody } from '../../contract/types.js';
import { verifyingKeyText } from '../../contract/verification.js';
import { RegistryDeclined, RegistryUnreachable, dataPart, filePart, isObject, networkCode, type JsonObject } from '../connection.js';
import { FileTooLarge, inputName, readBounded } from '../bounded-read.js';
import { JsonSource, JsonSyntaxError } from '../json-source.js';
import { fidelityFindings, type Fidelity } from '../../validation/json-fidelity.js';
import { failureMessage } from '../../validation/verdict.js';
import { EXIT_FAILED, EXIT_OK, countOf, defaultOutput, formatFindings, printJson, reportUsage, styles, withLocation, type Locate, type Output, type TypedArguments } from '../output.js';
import { runRemote } from '../remote.js';
import { nonEmpty } from '../option-values.js';
import { NEEDS_SERVER, ServerOptionsMisplaced, documentKindBeside, locateServerOptions, mcpServerOptions, serverFromOptions, serverOver, type McpServerOptions } from '../mcp-server-options.js';
import { DEFAULT_MAX_BYTES, misshapenDocument, readProblem } from '../document-kind.js';

interface RegisterOptions extends McpServerOptions {
  url?: string;
  fetchTools: boolean;
  dryRun: boolean;
  json: boolean;
}

/** What goes on the wire: the document's bytes, its file name, and MCP server metadata beside a toolspec. */
export interface Upload {
  bytes: Buffer;
  filename: 'agent-card.json' | 'toolspec.json';
  mcpServer?: JsonObject;
  /** For messages: the agent's or server's name, when the file says it. */
  name?: string;
  /** Where a path in the registry's answer is in the user's file. */
  locate: Locate;
  /**
   * What only the file's text shows (validation/json-fidelity.ts), paths as the registry's: its
   * errors (a number JSON cannot hold, a key given twice) refuse the file before it is sent.
   */
  fidelity: Fidelity;
  /**
   * Whether the bytes sent are the file's own, which the registry checks itself; not a
   * {"mcpServer", "toolspec"} document's toolspec, sent re-serialised (a number rounded, a key
   * given twice, are gone from it), whose fidelity warnings are then said here.
   */
  asWritten: boolean;
}

export class UsageError extends Error {}

/**
 * A file whose shape alone is wrong (misshapenDocument: half an MCP server document, its tools
 * beside its server), refused before it is sent as validate and import refuse it. Half a document
 * went as an agent card and came back with eight findings of a card's members; tools beside a
 * server asked for the --mcp-* options the file gave, and with them stored the server in the toolspec.
 */
class MisshapenFile extends Error {
  constructor(
    readonly details: Finding[],
    readonly locate: Locate,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Decides how to send a file. A card goes as agent-card.json. A toolspec goes as toolspec.json
 * with --mcp-* metadata beside it. A stored MCP document ({"mcpServer", "toolspec"}, what
 * `get --document` prints) is split the same way, its metadata overridden by any --mcp-* option
 * (as `validate` lays them over it), so an entry read from one registry can be registered again
 * as it is. A finding of a value an option gave is named at the option (`--mcp-url: ...`).
 */
export function planUpload(source: JsonSource, bytes: Buffer, options: McpServerOptions): Upload {
  const doc = source.value;
  const misshapen = misshapenDocument(doc);
  if (misshapen) throw new MisshapenFile(misshapen.details, (p) => source.locate(p), misshapen.message);
  const kind = documentKindBeside(source.file, doc, options, 'register');
  // The file's text, at the path its value has in the document the registry checks.
  const fidelity = fidelityFindings([{ value: doc, at: kind === 'mcp-toolspec' ? '/toolspec' : '', text: source.text }]);
  if (kind === 'mcp-server' && isObject(doc)) {
    // The registry's paths (/toolspec/..., /mcpServer/...) are already paths into this file, but for the options' values.
    const locate = locateServerOptions(options, (p) => source.locate(p));
    return { ...withServer(Buffer.from(JSON.stringify(doc.toolspec)), serverOver(doc.mcpServer, options), locate), fidelity, asWritten: false };
  }
  if (kind === 'mcp-toolspec') {
    if (options.mcpName === undefined || options.mcpUrl === undefined) throw new UsageError(NEEDS_SERVER);
    // The file is the toolspec alone: /toolspec/tools/0 is /tools/0 in it; /mcpServer/... came from the options.
    const inToolspec: Locate = (p) => (p === '' || p === '/toolspec' || p.startsWith('/toolspec/') ? source.locate(p.slice('/toolspec'.length)) : undefined);
    return { ...withServer(bytes, serverFromOptions(options), locateServerOptions(options, inToolspec)), fidelity, asWritten: true };
  }
  const name = isObject(doc) && typeof doc.name === 'string' ? doc.name : undefined;
  return { bytes, filename: 'agent-card.json', locate: (p) => source.locate(p), ...(name ? { name } : {}), fidelity, asWritten: true };
}

function withServer(bytes: Buffer, mcpServer: JsonObject, locate: Locate): Omit<Upload, 'fidelity' | 'asWritten'> {
  if (typeof mcpServer.name !== 'string' || typeof mcpServer.url !== 'string') throw new UsageError(NEEDS_SERVER);
  return { bytes, filename: 'toolspec.json', mcpServer, name: mcpServer.name, locate };
}

/**
 * A file the registry would refuse for what its text says (a number JSON cannot hold, a key
 * given twice), said before anything is sent, as the registry says it: the file's place of each
 * finding, and with --json the {"error"} document of its refusal. Exit 1.
 */
function refuseUnsent(o: Output, json: boolean, file: string, upload: Upload): number {
  const label = upload.filename === 'agent-card.json' ? 'agent card' : 'MCP server registration';
  return refuseFile(o, json, file, failureMessage(label, upload.fidelity.errors), upload.fidelity.errors, upload.locate);
}

/** A file refused here, before anything is sent: its message and each finding placed in the file; with --json its {"error"}. Exit 1. */
function refuseFile(o: Output, json: boolean, file: string, message: string, errors: readonly Finding[], locate: Locate): number {
  if (json) printJson(o, { error: { code: 'VALIDATION_FAILED', message, details: errors.map((f) => withLocation(f, locate)) } });
  const s = styles(o.color);
  o.err(`a2a-registry: ${inputName(file)} was not sent: ${message}\n${formatFindings(errors, 'error', s, locate)}`);
  return EXIT_FAILED;
}

/** The warnings of what the registry was sent, and of the file's text when that was not sent as it is. */
const withFileWarnings = (warnings: Finding[], upload: Upload): Finding[] => (upload.asWritten ? warnings : [...upload.fidelity.warnings, ...warnings]);

/**
 * The registry names the file part it was sent ("agent-card.json", "/parts/0/raw"); the user
 * knows the file they gave. Say theirs.
 */
function inUsersTerms(err: RegistryDeclined, upload: Upload, file: string): RegistryDeclined {
  const name = inputName(file);
  const message = err.error.message
    .replace(/File part \d+ \("(?:agent-card|toolspec)\.json"\)/g, name)
    .replace(new RegExp(`"${upload.filename.replace('.', '\\.')}"`, 'g'), `"${name}"`);
  // /parts/0/raw (too large, nested too deep) is the uploaded file as a whole.
  const details = err.error.details?.map((d) => (d.path.startsWith('/parts/') ? { ...d, path: '' } : d));
  return new RegistryDeclined(err.state, { ...err.error, message, ...(details ? { details } : {}) });
}

/** How a connection the registry closed while the request was still being sent fails. */
const CUT_WHILE_SENDING = new Set(['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET']);

/**
 * A document too large for the registry's request limit never reaches its checks: the registry
 * refuses the request at its door (REQUEST_TOO_LARGE, which the client reads as TOO_LARGE) and
 * closes the connection without reading the rest, so the CLI, still sending, may see the
 * connection cut before it reads that answer. Either way the user hears that their file is too
 * large (TOO_LARGE, exit 1), not "the registry answered with an error" or "cannot reach the
 * registry". A cut connection counts only for a file over the default document limit: a smaller
 * one cannot be over any request limit the registry allows.
 */
function tooLargeToSend(err: unknown, upload: Upload, file: string): RegistryDeclined | undefined {
  const atDoor = err instanceof RegistryDeclined && err.state === 'REFUSED' && err.error.code === 'TOO_LARGE' ? err.error.message : undefined;
  const cut = err instanceof RegistryUnreachable && CUT_WHILE_SENDING.has(networkCode(err) ?? '') && upload.bytes.length > DEFAULT_MAX_BYTES;
  if (atDoor === undefined && !cut) return undefined;
  const size = upload.bytes.length.toLocaleString('en-US');
  const why = atDoor !== undefined ? `the registry refused the request carrying it (${atDoor.replace(/\.$/, '')})` : 'the registry closed the connection while it was being sent, as it does with a request over its size limit';
  return new RegistryDeclined('REFUSED', {
    code: 'TOO_LARGE',
    message: `The document "${inputName(file)}" is ${size} bytes, too large for this registry: ${why}.`,
    details: [
      {
        path: '',
        rule: 'too-large',
        message: `${size} bytes is more than the registry accepts`,
        hint: `Documents are limited to REGISTRY_MAX_DOCUMENT_BYTES (${DEFAULT_MAX_BYTES.toLocaleString('en-US')} bytes by default): shorten descriptions and examples, or drop fields the registry does not need. \`a2a-registry validate ${file}\` measures it offline.`,
      },
    ],
  });
}

// --- output --------------------------------------------------------------------------------

function describeRegistration(r: RegistrationResult, upload: Pick<Upload, 'name' | 'locate'>, o: Output): string {
  const s = styles(o.color);
  // The registry's answer names it; a registry of an earlier release did not: then the file's.
  const name = r.name ?? upload.name;
  const named = name ? ` "${name}"` : '';
  const what = r.kind === 'agent' ? `agent${named}${r.protocolVersion ? ` (A2A ${r.protocolVersion})` : ''}` : `MCP server${named}`;
  const head = r.created
    ? `${s.green('✓ registered')} ${what}`
    : r.changed
      ? `${s.green('✓ updated')} ${what}`
      : `${s.green('✓ unchanged')} ${what} ${s.dim('(identical to the stored revision)')}`;
  const indexed = r.indexed ? ('skills' in r.indexed ? countOf(r.indexed.skills, 'skill') : countOf(r.indexed.tools, 'tool')) : '';
  let text = `${head}\n  id        ${r.id ?? '?'}\n  revision  ${r.revision ?? '?'}\n`;
  if (indexed) text += `  indexed   ${indexed}\n`;
  if (r.source) text += `  source    ${r.source.url} ${s.dim('(the registry refreshes it from there)')}\n`;
  if (r.verified || (r.signatures?.length ?? 0) > 0) text += `  verified  ${r.verified ? s.green(`yes (${verifyingKeyText(r.kid, r.jwks)})`) : 'no'}\n`;
  return text + formatFindings(r.warnings, 'warning', s, upload.locate);
}

function describeValidation(v: ValidationResultBody, o: Output, locate: Locate): string {
  const s = styles(o.color);
  const what = v.kind === 'agent' ? `A2A v${v.protocolVersion ?? '?'} agent card` : 'MCP toolspec';
  const head = v.valid
    ? `${s.green('✓ valid')} ${what}, ${v.sizeBytes.toLocaleString('en-US')} bytes ${s.dim('(dry run: nothing stored)')}`
    : `${s.red('✗ invalid')} ${what}, ${v.sizeBytes.toLocaleString('en-US')} bytes`;
  return `${head}\n${formatFindings(v.errors, 'error', s, locate)}${formatFindings(v.warnings, 'warning', s, locate)}`;
}

const findings = (v: unknown): Finding[] => (Array.isArray(v) ? v.filter(isObject).map((f) => f as unknown as Finding) : []);

/** Where the arguments of a registration by reference (--url, --fetch-tools) come from on the command line. */
const REFERENCE_ARGUMENTS: TypedArguments = {
  operation: 'register',
  from: {
    '/url': '--url',
    '/fetchTools': '--fetch-tools',
    '/mcpServer/name': '--mcp-name',
    '/mcpServer/url': '--mcp-url',
    '/mcpServer/description': '--mcp-description',
    '/mcpServer/version': '--mcp-version',
  },
};

/** `register --url` / `--fetch-tools`: the registry fetches the document; nothing is read here. */
function referenceOperation(file: string | undefined, options: RegisterOptions): JsonObject | undefined {
  if (options.url === undefined && !options.fetchTools) return undefined;
  if (options.url !== undefined && options.fetchTools) throw new UsageError('give either --url (an agent card) or --fetch-tools (an MCP server), not both');
  if (file !== undefined) throw new UsageError(`with ${options.url !== undefined ? '--url' : '--fetch-tools'} the registry fetches the document: leave out the file`);
  if (options.dryRun) throw new UsageError('--dry-run checks a document you send; the registry fetches documents only to register them');
  if (options.url !== undefined) {
    if (options.mcpName ?? options.mcpUrl ?? options.mcpDescription ?? options.mcpVersion) throw new UsageError('--url registers an agent card: the --mcp-* options go with --fetch-tools');
    return { register: { url: options.url } };
  }
  if (options.mcpName === undefined || options.mcpUrl === undefined) throw new UsageError('--fetch-tools needs the server: give --mcp-name <name> and --mcp-url <url>');
  return { register: { mcpServer: serverFromOptions(options), fetchTools: true } };
}

export function register(program: Command): void {
  mcpServerOptions(
    program
      .command('register')
      .description('register or update an A2A agent card, or an MCP server from its toolspec; or have the registry fetch them')
      .argument('[file]', 'an agent card (v1.0 or v0.3), or a toolspec ({"tools": [...]}) with --mcp-name and --mcp-url; "-" reads stdin')
      .option('--url <url>', 'have the registry fetch the agent card: a base URL (→ /.well-known/agent-card.json) or the card\'s URL', nonEmpty)
      .option('--fetch-tools', 'have the registry list the MCP server\'s tools (tools/list) at --mcp-url', false),
    {
      name: 'MCP server name (with a toolspec; over a {"mcpServer", "toolspec"} document\'s)',
      url: 'MCP server URL, its identity in the registry (with a toolspec; over a document\'s)',
      description: 'MCP server description',
      version: 'MCP server version',
    },
  )
    .option('--dry-run', 'let the registry check the document without storing it', false)
    .option('--json', 'print the registration result as JSON', false)
    .addHelpText(
      'after',
      '\nNeeds a token (--token or A2A_REGISTRY_TOKEN; on the registry\'s machine its generated admin token is used).\n' +
        'Registering the same agent again (same primary interface URL; for MCP, the same server URL) updates it.\n' +
        'Exit status: 0 registered, updated or unchanged; 1 declined by the registry (or the file is not JSON, or holds a key given twice or a number past 1.8e308, or is a misshapen MCP server document: said before sending it); 2 usage (also: the file cannot be read); 3 registry unreachable.\n' +
        'With --url or --fetch-tools the registry fetches the document and keeps the entry fresh from there\n' +
        '(see REGISTRY_REFRESH_SECONDS; `a2a-registry refresh <id>` fetches it again at once).\n' +
        'Examples:\n  a2a-registry register examples/agent-card.json\n' +
        '  a2a-registry register examples/toolspec.json --mcp-name files --mcp-url https://mcp.example.com/files/mcp\n' +
        '  a2a-registry register --url https://agent.example.com\n' +
        '  a2a-registry register --fetch-tools --mcp-name files --mcp-url https://mcp.example.com/files/mcp',
    )
    .action(async (file: string | undefined, options: RegisterOptions, command: Command) => {
      const o = defaultOutput();
      let reference: JsonObject | undefined;
      try {
        reference = referenceOperation(file, options);
      } catch (err) {
        if (!(err instanceof UsageError)) throw err;
        process.exitCode = reportUsage(o, options.json, 'USAGE', err.message);
        return;
      }
      if (reference) {
        const named = options.fetchTools ? options.mcpName : undefined;
        process.exitCode = await runRemote(command, async ({ client, out, json }) => {
          const { data } = await client.send([dataPart(reference)]);
          const r = { ...data, warnings: findings(data.warnings) } as unknown as RegistrationResult;
          if (json) printJson(out, data);
          else out.out(describeRegistration(r, { name: named, locate: () => undefined }, out));
          return EXIT_OK;
        }, { arguments: REFERENCE_ARGUMENTS });
        return;
      }
      if (file === undefined) {
        process.exitCode = reportUsage(o, options.json, 'USAGE', 'give a file, or --url, or --fetch-tools');
        return;
      }
      let bytes: Buffer;
      try {
        bytes = await readBounded(file);
      } catch (err) {
        if (err instanceof FileTooLarge) {
          // Too large for any registry, as the registry's own TOO_LARGE is (exit 1); nothing is sent.
          if (options.json) printJson(o, { error: { code: 'TOO_LARGE', message: err.message } });
          o.err(`a2a-registry: ${err.message}\n`);
          process.exitCode = EXIT_FAILED;
          return;
        }
        process.exitCode = reportUsage(o, options.json, 'READ_ERROR', readProblem(file, err));
        return;
      }
      let upload: Upload;
      try {
        upload = planUpload(JsonSource.parse(inputName(file), bytes), bytes, options);
      } catch (err) {
        if (err instanceof UsageError || err instanceof ServerOptionsMisplaced) {
          process.exitCode = reportUsage(o, options.json, 'USAGE', err.message);
          return;
        }
        if (err instanceof MisshapenFile) {
          process.exitCode = refuseFile(o, options.json, file, err.message, err.details, err.locate);
          return;
        }
        if (!(err instanceof JsonSyntaxError)) throw err;
        // The registry would refuse it too; saying where the mistake is saves a round trip.
        if (options.json) printJson(o, { error: { code: 'NOT_JSON', message: err.message, location: err.location } });
        o.err(`a2a-registry: ${err.message}\n`);
        process.exitCode = EXIT_FAILED;
        return;
      }
      if (upload.fidelity.errors.length > 0) {
        process.exitCode = refuseUnsent(o, options.json, file, upload);
        return;
      }
      const remote = await runRemote(
        command,
        async ({ client, out, json }) => {
          const parts = [filePart(upload.bytes, upload.filename)];
          const operation = options.dryRun ? 'validate' : 'register';
          // The operation rides beside the file; an agent card alone would already mean "register".
          if (upload.mcpServer) parts.push(dataPart({ [operation]: { mcpServer: upload.mcpServer } }));
          else if (options.dryRun) parts.push(dataPart({ validate: {} }));
          let data: JsonObject;
          try {
            ({ data } = await client.send(parts));
          } catch (err) {
            throw tooLargeToSend(err, upload, file) ?? (err instanceof RegistryDeclined ? inUsersTerms(err, upload, file) : err);
          }
          if (options.dryRun) {
            const v = { ...data, errors: findings(data.errors), warnings: withFileWarnings(findings(data.warnings), upload) } as unknown as ValidationResultBody;
            if (json) printJson(out, { ...v, errors: v.errors.map((f) => withLocation(f, upload.locate)), warnings: v.warnings.map((f) => withLocation(f, upload.locate)) });
            else out.out(describeValidation(v, out, upload.locate));
            return v.valid ? EXIT_OK : EXIT_FAILED;
          }
          const r = { ...data, warnings: withFileWarnings(findings(data.warnings), upload) } as unknown as RegistrationResult;
          if (json) printJson(out, { ...r, warnings: r.warnings.map((f) => withLocation(f, upload.locate)) });
          else out.out(describeRegistration(r, upload, out));
          return EXIT_OK;
        },
        { locate: upload.locate },
      );
      process.exitCode = remote;
    });
}
