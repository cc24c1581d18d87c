/**
 * Conversions between what storage keeps and what the contract shows or search indexes.
 * Stored MCP entries keep `{"mcpServer": ..., "toolspec": ...}` with the toolspec's text exactly
 * as received, so the document can be answered byte for byte.
 */
import type { EntryView, McpServerDocument } from '../contract/types.js';
import type { IndexedEntry } from '../search/types.js';
import type { StoredEntry } from '../storage/types.js';
import type { EntryDescription } from '../contract/description.js';
import { describeAgentCard, describeMcpServer } from './describe.js';

/** The stored text of an MCP entry: server metadata as compact JSON, the toolspec verbatim. */
export function mcpDocumentText(server: unknown, toolspecText: string): string {
  return `{"mcpServer":${JSON.stringify(server)},"toolspec":${toolspecText}}`;
}

export function describeStored(entry: StoredEntry, document: unknown = JSON.parse(entry.documentText)): EntryDescription {
  return entry.kind === 'agent'
    ? describeAgentCard(document, entry.protocolVersion === '0.3' ? '0.3' : '1.0')
    : describeMcpServer(document as McpServerDocument);
}

/** What the index keeps of an entry; `description` when the caller already built it. */
export function toIndexedEntry(entry: StoredEntry, description: EntryDescription = describeStored(entry)): IndexedEntry {
  const indexed: IndexedEntry = { id: entry.id, owner: entry.owner, listSeq: entry.listSeq, description };
  if (entry.health) indexed.health = entry.health;
  if (entry.drift !== undefined) indexed.drift = entry.drift;
  if (entry.source) indexed.source = entry.source;
  if (entry.verification?.verified) {
    indexed.verified = true;
    indexed.kid = entry.verification.kid;
    indexed.jwks = entry.verification.jwks;
  }
  return indexed;
}

export function toEntryView(entry: StoredEntry, withDocument: boolean): EntryView {
  const view: EntryView = {
    id: entry.id,
    kind: entry.kind,
    name: entry.name,
    description: entry.description,
    owner: entry.owner,
    revision: entry.revision,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    interfaces: entry.interfaces,
    contentHash: entry.contentHash,
    verified: entry.verification?.verified === true,
  };
  if (entry.protocolVersion) view.protocolVersion = entry.protocolVersion;
  if (entry.source) view.source = entry.source;
  if (entry.health) view.health = entry.health;
  if (entry.drift !== undefined) view.drift = entry.drift;
  if (entry.revisionOrigin) view.revisionOrigin = entry.revisionOrigin;
  if (entry.verification?.verified && entry.verification.kid !== undefined) view.kid = entry.verification.kid;
  if (entry.verification?.verified && entry.verification.jwks !== undefined) view.jwks = entry.verification.jwks;
  if (withDocument) {
    if (entry.verification && entry.verification.signatures.length > 0) view.signatures = entry.verification.signatures;
    view.document = JSON.parse(entry.documentText);
  }
  return view;
}
