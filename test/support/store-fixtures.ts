/** Small builders shared by the storage tests and the crash-test writer. */
import { createHash } from 'node:crypto';
import type { EntryKind } from '../../src/contract/types.js';
import type { Actor, EntryWrite } from '../../src/storage/types.js';
import { endpointIdentity } from '../../src/lib/endpoint-url.js';
import { prng } from '../../bench/lib/generate-entries.js';

export function actor(principal: string, isAdmin = false): Actor {
  return { principal, isAdmin };
}

/** A registration write whose document (and so content hash) depends on `version`. */
export function entryWrite(kind: EntryKind, identityUrl: string, version = '1', name = 'Test entry'): EntryWrite {
  const document =
    kind === 'agent'
      ? {
          name,
          description: `An agent, version ${version}`,
          version,
          supportedInterfaces: [{ url: identityUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        }
      : {
          mcpServer: { name, url: identityUrl, version },
          toolspec: { tools: [{ name: 'echo', inputSchema: { type: 'object' } }] },
        };
  const documentText = JSON.stringify(document);
  const interfaces =
    kind === 'agent' ? [{ url: identityUrl, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] : [{ url: identityUrl, protocolBinding: 'MCP' }];
  const write: EntryWrite = {
    kind,
    identityUrl,
    name,
    description: `${kind} ${name} v${version}`,
    interfaces,
    documentText,
    contentHash: createHash('sha256').update(documentText).digest('hex'),
    urls: endpointIdentity(interfaces).claims,
  };
  if (kind === 'agent') write.protocolVersion = '1.0';
  return write;
}

/** Deterministic PRNG (mulberry32), so a failing random schedule can be replayed by seed. */
export const seededRandom = prng;
