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
