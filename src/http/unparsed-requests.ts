/**
 * Answers for requests Node's HTTP parser refuses before any route sees them. Node's own answer
 * is a bare status line: a URL and headers over its 16 KiB limit (a long GET /tasks query, an
 * oversized cookie) got "431 Request Header Fields Too Large" with no body, which an A2A or MCP
 * client reports as an unreadable answer ("Unexpected end of JSON input"), where every other
 * refusal says what was wrong and what to do. These say it, in the error object the HTTP+JSON
 * binding uses (google.rpc.Status: the parser stopped before the path could choose a binding),
 * with Connection: close as Node's. Every other case is answered exactly as Node answers it.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';

/** Node's own answers (lib/_http_server.js), for the cases answered as it answers them. */
const BARE: Record<string, string> = {
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
};
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n';

function jsonAnswer(status: number, reason: string, grpcStatus: string, message: string): string {
  const body = JSON.stringify({ error: { code: status, status: grpcStatus, message } });
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/** The answer to a request the parser refused with `code`. */
export function unparsedRequestAnswer(code: string | undefined): string {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return jsonAnswer(
      431,
      'Request Header Fields Too Large',
      'INVALID_ARGUMENT',
      `The request line (URL) and headers together exceed ${http.maxHeaderSize} bytes, the most this server reads. Shorten the URL's query (a JSON-RPC request carries its parameters in the body instead) or drop oversized headers.`,
    );
  }
  return (code !== undefined && BARE[code]) || BAD_REQUEST;
}

/** Installs the answers on `server`, in place of Node's default 'clientError' handling. */
export function answerUnparsedRequests(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node's default: answer only a socket that can still take one and has had none begun.
    if (socket.writable && (socket as Duplex & { bytesWritten?: number }).bytesWritten === 0) socket.write(unparsedRequestAnswer(err.code));
    socket.destroy(err);
  });
}
