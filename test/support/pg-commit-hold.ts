/**
 * A TCP relay on 127.0.0.1 in front of a PostgreSQL server that can hold back the server's
 * answer to COMMIT: the transaction is committed (other connections see it, its NOTIFY is sent),
 * but the connection that committed hears so only `holdMs` later, as when the committing
 * backend is descheduled on a busy machine. Everything else passes through at once, in order.
 */
import net from 'node:net';

/** CommandComplete ('C', length 11) for "COMMIT": the server's acknowledgement of a commit. */
const COMMIT_DONE = Buffer.from([0x43, 0, 0, 0, 11, ...Buffer.from('COMMIT\0')]);

export interface CommitHold {
  /** The database URL, through the relay. */
  url: string;
  /** How long to hold back each COMMIT's acknowledgement from now on (0: not at all). */
  holdMs: number;
  /** How many acknowledgements were held back so far. */
  readonly held: number;
  close(): Promise<void>;
}

export async function holdCommits(databaseUrl: string): Promise<CommitHold> {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  const state = { holdMs: 0, held: 0 };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    // Order is kept per connection: a held chunk holds everything after it.
    let sent: Promise<void> = Promise.resolve();
    upstream.on('data', (chunk: Buffer) => {
      const hold = state.holdMs > 0 && chunk.includes(COMMIT_DONE) ? state.holdMs : 0;
      if (hold) state.held++;
      sent = sent.then(() => (hold ? new Promise((resolve) => setTimeout(resolve, hold)) : undefined)).then(() => {
        if (!client.destroyed) client.write(chunk);
      });
    });
    client.on('data', (chunk: Buffer) => upstream.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', () => void sent.then(end)).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  return {
    url: url.toString(),
    get holdMs() {
      return state.holdMs;
    },
    set holdMs(ms: number) {
      state.holdMs = ms;
    },
    get held() {
      return state.held;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
