/**
 * The frame every command that talks to a registry runs in: resolve the connection from the
 * global options, connect through the registry's agent card, run the command, and turn a
 * failure into its message and exit code. Commands only describe the request and the output.
 */
import type { Command } from 'commander';
import type { RegistryClient } from './client.js';
import { BadConnectionOption, RegistryDeclined, RegistryProtocolError, RegistryUnreachable, resolveConnection, type Connection } from './connection.js';
import { warnTokenFlag } from './password-flags.js';
import { defaultOutput, reportFailure, reportUsage, styles, typedArgumentsAt, type Locate, type Output, type TypedArguments } from './output.js';

/** Options every remote command sees: the program's (--registry, --token, --timeout) and its own --json. */
export interface RemoteOptions {
  registry?: string;
  token?: string;
  timeout?: number;
  json?: boolean;
}

export interface RemoteContext {
  client: RegistryClient;
  out: Output;
  json: boolean;
}

export interface RemoteSettings {
  /** Places the registry's findings in the user's file (register). */
  locate?: Locate;
  /**
   * Which of the operation's arguments each option or argument of the command gives: a refusal
   * of one is named as the user typed it (`--page-token`), not at the request's path.
   */
  arguments?: TypedArguments;
  /** A watch: its event stream outlives --timeout, which bounds every other answer whole. */
  openStreams?: boolean;
  /** --json prints JSON lines (a watch's events): a failure is one line too. */
  jsonLines?: boolean;
}

export async function runRemote(command: Command, body: (ctx: RemoteContext) => Promise<number>, settings: RemoteSettings = {}): Promise<number> {
  const options = command.optsWithGlobals<RemoteOptions>();
  const out: Output = { ...defaultOutput(), jsonLines: settings.jsonLines };
  const json = options.json === true;
  warnTokenFlag(command, out);
  let connection: Connection;
  try {
    connection = { ...resolveConnection(options), openStreams: settings.openStreams };
  } catch (err) {
    if (err instanceof BadConnectionOption) return reportUsage(out, json, 'USAGE', err.message);
    throw err;
  }
  // As the commands that read the registry's settings say them (./command-settings.ts).
  for (const warning of connection.warnings ?? []) out.err(`a2a-registry: ${styles(out.color).yellow('warning')}: ${warning}\n`);
  try {
    // The A2A client (the SDK, and jose with it) is loaded only now: a usage error above, or a
    // command's --help, never needs it.
    const { RegistryClient } = await import('./client.js');
    const client = await RegistryClient.connect(connection);
    return await body({ client, out, json });
  } catch (err) {
    if (!(err instanceof RegistryDeclined || err instanceof RegistryUnreachable || err instanceof RegistryProtocolError)) throw err;
    const code = reportFailure(err, out, json, settings.locate ?? (settings.arguments && typedArgumentsAt(settings.arguments)));
    if (err instanceof RegistryDeclined && err.error.code === 'UNAUTHENTICATED') out.err(tokenHint(connection));
    return code;
  }
}

function tokenHint(connection: Connection): string {
  if (connection.tokenLeftAt) {
    return `The token was not sent: the request was redirected to ${connection.tokenLeftAt}, another origin, which a token is never sent on to; give ${connection.tokenLeftAt} as --registry or A2A_REGISTRY_URL.\n`;
  }
  if (connection.tokenSource === 'admin-token-file') {
    // Refused, the request went again without it (reads need none): this one needs a token.
    return 'The admin token from the data directory was sent and not accepted: the registry uses other tokens (REGISTRY_TOKENS); give yours with --token or A2A_REGISTRY_TOKEN.\n';
  }
  if (connection.tokenSource === 'option') return ''; // the registry's message already says the token is not recognised
  if (connection.unreadableTokenFile) {
    return `No token was sent: ${connection.unreadableTokenFile}. Run the command as the registry's user, or give a token with --token or A2A_REGISTRY_TOKEN.\n`;
  }
  return 'Give a token with --token or A2A_REGISTRY_TOKEN (on the registry\'s own machine, its generated ${REGISTRY_DATA_DIR:-./data}/admin-token is used when readable).\n';
}
