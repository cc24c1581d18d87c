/**
 * Searching the registry with the A2A SDK (@a2a-js/sdk), as any peer agent does:
 *
 *   REGISTRY_URL=http://127.0.0.1:8080 npx tsx examples/sdk-search.ts translate invoices
 *
 * REGISTRY_URL says which registry (default http://127.0.0.1:8080); A2A_REGISTRY_TOKEN, when
 * set, is sent as the bearer token (searching needs none unless the registry is private).
 */
import { SendMessageRequest, type Part } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

const registryUrl = process.env.REGISTRY_URL ?? 'http://127.0.0.1:8080';
const token = process.env.A2A_REGISTRY_TOKEN;

const fetchImpl: typeof fetch = (input, init) => {
  const headers = new Headers(init?.headers);
  if (token) headers.set('authorization', `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};
// The factory reads the registry's agent card and connects to the JSON-RPC interface it names.
const client = await new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }),
).createFromUrl(registryUrl);

// One message carries one operation: a data part {"search": {...}}, written as wire JSON.
const search = (query: string): SendMessageRequest =>
  SendMessageRequest.fromJSON({
    message: {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER',
      parts: [{ data: { search: { query, limit: 5 } }, mediaType: 'application/json' }],
    },
  });

const dataOf = (parts: Part[]): Record<string, unknown> | undefined => {
  const content = parts[0]?.content;
  return content?.$case === 'data' ? content.value : undefined;
};

const query = process.argv.slice(2).join(' ') || 'invoices';

// The whole answer at once: a completed task whose `search-results` artifact holds the page.
const result = await client.sendMessage(search(query));
if ('status' in result) {
  const page = dataOf(result.artifacts[0]?.parts ?? []) as { results: { id: string; name: string }[]; total: number } | undefined;
  console.log(`${page?.total ?? 0} match(es) for "${query}"`);
  for (const hit of page?.results ?? []) console.log(`  ${hit.name}  ${hit.id}`);
}

// The same as a stream: the task, then chunks of the artifact as they are ready, then COMPLETED.
let chunks = 0;
for await (const event of client.sendMessageStream(search(query))) {
  if (event.payload?.$case === 'artifactUpdate') chunks++;
}
console.log(`streamed in ${chunks} chunk(s)`);
