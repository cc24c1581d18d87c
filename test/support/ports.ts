/** Ports for tests that must name one before anything listens on it. */
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on now (the kernel's pick, released at once). */
export async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}
