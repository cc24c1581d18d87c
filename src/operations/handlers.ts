/**
 * One handler per operation of the contract: authorisation, then the service call, then the
 * answer as the contract shapes it (a data part for programs, a text part for people).
 */
import type { SearchHit, SearchPage } from '../contract/types.js';
import type { RegistryService } from '../registry/service.js';
import type { Actor } from '../storage/types.js';
import type { AnswerChunk, OperationResult } from './answer.js';
import { RegistryError } from '../contract/errors.js';
import type { Operation } from './operation.js';
import { describeHits, summarizeEntries, summarizeEntry, summarizeRegistration, summarizeValidation } from './summaries.js';

/** Who is asking: an actor when the request carried a valid token. */
export interface Caller {
  actor?: Actor;
  /** A token was sent but is not one the registry knows. */
  badToken: boolean;
}

export interface HandlerOptions {
  publicRead: boolean;
  /** Hits per streamed chunk of a search-results artifact. */
  searchChunkSize: number;
}

function requireActor(caller: Caller, what: string): Actor {
  if (caller.actor) return caller.actor;
  throw new RegistryError(
    'UNAUTHENTICATED',
    caller.badToken
      ? `The bearer token is not recognised; ${what} needs a valid registry token in the Authorization header.`
      : `${what} needs a registry token: send "Authorization: Bearer <token>" (see REGISTRY_TOKENS, or the admin-token file in the registry's data directory).`,
  );
}

function requireReader(caller: Caller, options: HandlerOptions, what: string): void {
  if (!options.publicRead) requireActor(caller, what);
}

async function* searchChunks(page: SearchPage, size: number): AsyncIterable<AnswerChunk> {
  if (page.results.length === 0) {
    yield { data: { results: [], total: page.total }, text: describeHits([], page.total, 0) };
    return;
  }
  for (let start = 0; start < page.results.length; start += size) {
    const hits: SearchHit[] = page.results.slice(start, start + size);
    const last = start + size >= page.results.length;
    const data: Record<string, unknown> = { results: hits };
    if (last) {
      data.total = page.total;
      if (page.nextPageToken) data.nextPageToken = page.nextPageToken;
    }
    yield { data, text: describeHits(hits, last ? page.total : undefined, start) };
  }
}

export async function handle(
  operation: Operation,
  caller: Caller,
  service: RegistryService,
  options: HandlerOptions & { streaming: boolean },
): Promise<OperationResult> {
  switch (operation.op) {
    case 'register': {
      const actor = requireActor(caller, 'Registering');
      const result = await service.register(operation.subject, actor);
      return { artifactName: 'registration', data: { ...result }, text: summarizeRegistration(result) };
    }
    case 'validate': {
      const result = service.validate(operation.subject);
      return { artifactName: 'validation', data: { ...result }, text: summarizeValidation(result) };
    }
    case 'search': {
      requireReader(caller, options, 'Searching');
      const page = service.search(operation.request);
      if (options.streaming) return { artifactName: 'search-results', chunks: searchChunks(page, options.searchChunkSize) };
      return { artifactName: 'search-results', data: { ...page }, text: describeHits(page.results, page.total, 0) };
    }
    case 'get': {
      requireReader(caller, options, 'Reading an entry');
      const entry = await service.get(operation.id, operation.revision);
      return { artifactName: 'entry', data: { ...entry }, text: summarizeEntry(entry) };
    }
    case 'list': {
      requireReader(caller, options, 'Listing entries');
      // "mine" is resolved from the token, so it needs one even when reads are public.
      const owner = operation.request.filter?.mine ? requireActor(caller, 'Listing your own entries').principal : undefined;
      const page = await service.list(operation.request, owner);
      return { artifactName: 'entries', data: { ...page }, text: summarizeEntries(page) };
    }
    case 'unregister': {
      const actor = requireActor(caller, 'Unregistering');
      const removed = await service.unregister(operation.id, actor);
      return {
        artifactName: 'unregistration',
        data: { ...removed, deleted: true },
        text: `Unregistered ${removed.kind} "${removed.name}" (${removed.id}).`,
      };
    }
  }
}
