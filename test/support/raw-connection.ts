/**
 * A raw TCP conversation with a registry, for what an HTTP client hides: a body sent slowly or
 * only in part, and exactly what the server wrote back and when it hung up.
 */
import net from 'node:net';

export interface Conversation {
  socket: net.Socket;
  /** Everything the server sent. */
  received(): string;
  /** Resolves when the server closes the connection, with the milliseconds since `opened`. */
  closed: Promise<number>;
  opened: number;
}

/** Opens a connection to the registry at `url` (its port, on 127.0.0.1). */
export async function connect(url: string): Promise<Conversation> {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let text = '';
  socket.on('data', (d) => (text += d.toString()));
  socket.on('error', () => undefined); // writes after the server hung up
  const opened = performance.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - opened)));
  return { socket, received: () => text, closed, opened };
}

/**
 * Sends `head` (a request line and headers announcing a chunked body) and then 64 KB chunks
 * without end, until the server closes the connection or `withinMs` passes. Returns whether it
 * closed, and what it answered: a refusal must not read such a body without limit.
 */
export async function sendEndlessBody(url: string, head: string, withinMs: number): Promise<{ closed: boolean; received: string }> {
  const endless = await connect(url);
  endless.socket.write(head);
  const chunk = 'x'.repeat(64 * 1024);
  const sending = setInterval(() => {
    if (!endless.socket.destroyed) endless.socket.write(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  }, 5);
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([endless.closed.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), withinMs)))]);
  clearTimeout(timer);
  clearInterval(sending);
  endless.socket.destroy();
  return { closed, received: endless.received() };
}
