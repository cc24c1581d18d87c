/**
 * The steps every write of a document shares — a registration, and a refresh that found a new
 * version at the entry's source — so both take the same path: validate, describe and write,
 * publish the committed change, answer with a registration result.
 */
import { hash } from 'node:crypto';
import { RegistryError } from '../contract/errors.js';
import type { EntryDescription } from '../contract/description.js';
import type { Subject } from '../contract/subject.js';
import type { Finding, McpServerDocument, RegistrationResult } from '../contract/types.js';
import type { EntryWrite, StoredEntry } from '../storage/types.js';
import type { DocumentValidator, Verdict } from '../validation/index.js';
import type { ChangeFeed, CommittedChange } from './change-feed.js';
import { describeAgentCard, describeMcpServer } from './describe.js';
import { endpointClaims, identityUses, type EndpointClaims } from './endpoint-claims.js';
import { mcpDocumentText } from './entries.js';
import { quote } from '../lib/json.js';
import { otherSpellings, otherSpellingsOfNormalForm, shownEndpoint, shownEndpointKey } from '../lib/endpoint-url.js';

/** The verdict on a valid document; an invalid one is declined with its errors, as register would. */
export function checkDocument(validator: DocumentValidator, subject: Subject): Verdict {
  const verdict =
    subject.type === 'agent-card'
      ? validator.validateAgentCard(subject.card, subject.sizeBytes, subject.written)
      : subject.server === undefined
        ? validator.validateToolspec(subject.toolspec, subject.sizeBytes, subject.written)
        : validator.validateMcpServer(subject.server, subject.toolspec, subject.sizeBytes, subject.written);
  if (!verdict.valid) {
    throw new RegistryError(verdict.errorCode ?? 'VALIDATION_FAILED', verdict.message ?? 'The document is not valid.', verdict.errors);
  }
  return verdict;
}

/**
 * What storage writes for a valid document, its description, and the endpoint URLs it claims
 * (identified by their normal form, lib/endpoint-url.ts).
 */
export function entryWriteOf(subject: Subject, verdict: Verdict): { write: EntryWrite; description: EntryDescription; claims: EndpointClaims } {
  const documentText = subject.type === 'agent-card' ? subject.documentText : mcpDocumentText(subject.server, subject.toolspecText);
  const description =
    subject.type === 'agent-card'
      ? describeAgentCard(subject.card, verdict.generation ?? '1.0')
      : describeMcpServer({ mcpServer: subject.server, toolspec: subject.toolspec } as McpServerDocument);
  const claims = endpointClaims(subject, verdict, description.identityUrl);
  const write: EntryWrite = {
    kind: description.kind,
    identityUrl: claims.identityUrl,
    identityAliases: claims.identityIsUrl ? otherSpellingsOfNormalForm(claims.identityUrl) : otherSpellings(claims.identityUrl),
    name: description.name,
    description: description.description,
    protocolVersion: description.protocolVersion,
    interfaces: description.interfaces,
    documentText,
    contentHash: hash('sha256', documentText, 'hex'),
    urls: claims.urls,
  };
  return { write, description, claims };
}

/**
 * FORBIDDEN for a document whose identity is another principal's entry (register and import say
 * the same): names the URL and the entry, never its owner, with the path of each use of the URL
 * in the document, as a taken secondary URL is reported (endpoint-claims.ts urlTaken).
 */
export function identityTaken(claims: EndpointClaims, existingId: string, importOwner?: string): RegistryError {
  const uses = identityUses(claims);
  // As the document wrote it (the normal form may read differently).
  const shown = uses[0] ? shownEndpoint(uses[0].url, uses[0].tenant) : shownEndpointKey(claims.identityUrl);
  // An import (`importOwner`: its --owner) never acts as an admin: "only its owner or an admin
  // may update it" told one run as --owner admin, the default, that it should have been allowed.
  const who =
    importOwner === undefined
      ? 'only its owner or an admin may update it.'
      : `an import stores and updates the entries of its --owner (${quote(importOwner)}) only, never another principal's (with --owner admin too: it does not update as an admin does online).`;
  const hint =
    importOwner === undefined
      ? 'Register your own endpoint, or ask the owner (or an admin) to update that entry.'
      : `Import it with --owner set to that entry's owner (a2a-registry get ${existingId} shows it), or leave it out.`;
  return new RegistryError(
    'FORBIDDEN',
    `${shown} is already registered as entry ${existingId} by another principal; ${who}`,
    uses.map((e) => ({
      path: e.path,
      rule: 'identity-taken',
      message: `${shownEndpoint(quote(e.url), e.tenant)} identifies entry ${existingId}, which belongs to another principal`,
      hint,
    })),
  );
}

/**
 * The details of a refresh refused because the fetched document's identity is another entry of the
 * same owner (a registration would update that entry; a refresh cannot make two entries one):
 * the rule of a taken identity, the path of each use of the URL in the document.
 */
export function identityOfOwnEntry(claims: EndpointClaims, existingId: string): Finding[] {
  return identityUses(claims).map((e) => ({
    path: e.path,
    rule: 'identity-taken',
    message: `${shownEndpoint(quote(e.url), e.tenant)} identifies entry ${existingId}, another entry of the same owner`,
    hint: 'Two entries cannot be one agent: unregister one of them, or serve this entry\'s own card at its source.',
  }));
}

export function registrationResultOf(
  entry: StoredEntry,
  description: EntryDescription,
  outcome: { created: boolean; changed: boolean; warnings: RegistrationResult['warnings'] },
): RegistrationResult {
  const result: RegistrationResult = {
    id: entry.id,
    kind: entry.kind,
    name: entry.name,
    revision: entry.revision,
    created: outcome.created,
    changed: outcome.changed,
    indexed: entry.kind === 'agent' ? { skills: description.skills.length } : { tools: description.tools.length },
    warnings: outcome.warnings,
  };
  if (entry.protocolVersion) result.protocolVersion = entry.protocolVersion;
  if (entry.source) result.source = entry.source;
  if (entry.health) result.health = entry.health;
  if (entry.revisionOrigin) result.revisionOrigin = entry.revisionOrigin;
  const verification = entry.kind === 'agent' ? entry.verification : undefined;
  if (verification) {
    result.verified = verification.verified;
    if (verification.kid !== undefined) result.kid = verification.kid;
    if (verification.jwks !== undefined) result.jwks = verification.jwks;
    result.signatures = verification.signatures;
  }
  return result;
}

/** Publishes a committed upsert of this process; `description` when the writer built it (saves a re-parse). */
export function publishUpsert(feed: ChangeFeed, entry: StoredEntry, cause: NonNullable<CommittedChange['cause']>, description?: EntryDescription): void {
  feed.publish({ id: entry.id, op: 'upsert', entry, ...(description ? { description } : {}), origin: 'local', cause });
}
