/**
 * Answers for requests Node's HTTP parser refuses before any route sees them. Node's own answer
 * is a bare status line: a URL and headers over its 16 KiB limit (a long GET /tasks query, an
 * oversized cookie) got "431 Request Header Fields Too Large" with no body, which an A2A or MCP
 * client reports as an unreadable answer ("Unexpected end of JSON input"), where every other
 * refusal says what was wrong and what to do. These say it, in the error object the HTTP+JSON
 * binding uses (google.rpc.Status: the parser stopped before the path could choose a binding),
 * with Connection: close as Node's. So is a method Node's parser does not know (501: it was a
 * bare 400), and CONNECT (501: the connection was closed without an answer). Every other case is
 * answered exactly as Node answers it.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { noteServerAnswer } from '../observability/request-outcome.js';

/** An answer written on the socket, and the status and reason the request in flight, if any, is logged and counted with. */
interface SocketAnswer {
  text: string;
  status: number;
  reason: string;
}

/** Node's own answers (lib/_http_server.js), for the cases answered as it answers them. */
const BARE: Record<string, SocketAnswer> = {
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { text: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n', status: 413, reason: 'REQUEST_TOO_LARGE' },
  ERR_HTTP_REQUEST_TIMEOUT: { text: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n', status: 408, reason: 'REQUEST_TIMEOUT' },
};
const BAD_REQUEST: SocketAnswer = { text: 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', status: 400, reason: 'BAD_REQUEST' };

function jsonAnswer(status: number, statusText: string, grpcStatus: string, reason: string, message: string): SocketAnswer {
  const body = JSON.stringify({ error: { code: status, status: grpcStatus, message } });
  const text = `HTTP/1.1 ${status} ${statusText}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
  return { text, status, reason };
}

/**
 * The method of a request line Node's parser refused for its method: a token (RFC 9110 5.6.2)
 * followed by a space, as an HTTP client writes one. Undefined for bytes that are no request line
 * (a TLS handshake on the plain port), answered as Node answers them.
 */
function methodOfRequestLine(packet: Buffer | undefined): string | undefined {
  const line = packet?.subarray(0, 64).toString('latin1');
  return line === undefined ? undefined : /^([!#$%&'*+\-.^_`|~0-9A-Za-z]{1,32}) /.exec(line)?.[1];
}

/**
 * The answer to a request the parser refused with `code`; `packet` is what it had read (the
 * error's rawPacket).
 */
export function unparsedRequestAnswer(code: string | undefined, packet?: Buffer): SocketAnswer {
  const method = code === 'HPE_INVALID_METHOD' ? methodOfRequestLine(packet) : undefined;
  if (method !== undefined) {
    // A method Node does not know (BREW; get, in lower case: methods are case-sensitive) is one
    // the server does not implement: 501 (RFC 9110 15.6.2) saying which methods it takes, where
    // Node answered a bare 400, as to bytes that are no HTTP at all.
    return jsonAnswer(
      501,
      'Not Implemented',
      'UNIMPLEMENTED',
      'METHOD_NOT_IMPLEMENTED',
      `The method ${method} is not one this server implements: its routes take GET, HEAD, POST and DELETE (OPTIONS lists a path's, in Allow). Methods are case-sensitive: send them in upper case.`,
    );
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return jsonAnswer(
      431,
      'Request Header Fields Too Large',
      'INVALID_ARGUMENT',
      'REQUEST_TOO_LARGE',
      `The request line (URL) and headers together exceed ${http.maxHeaderSize} bytes, the most this server reads. Shorten the URL's query (a JSON-RPC request carries its parameters in the body instead) or drop oversized headers.`,
    );
  }
  return (code !== undefined && BARE[code]) || BAD_REQUEST;
}

/**
 * Installs the answers on `server`, in place of Node's default 'clientError' handling. A request
 * whose headers had arrived (its body had not, in full, within REGISTRY_REQUEST_TIMEOUT_SECONDS)
 * is then in flight: the answer is noted for its log line and metrics, which would otherwise
 * take its response, never ended, for a client gone away.
 */
export function answerUnparsedRequests(server: http.Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // As Node's default: answer only a socket that can still take one, and on which no answer has
    // begun (the answer in flight's headers not sent). Node's own handler reads the connection's
    // current response (socket._httpMessage: null once an answer ended, undefined before any);
    // without it, a socket that has written nothing. Asking the latter alone, a keep-alive
    // connection's second request cut for its slow body got no 408, its first answer written.
    const current = (socket as Duplex & { _httpMessage?: http.ServerResponse | null })._httpMessage;
    const begun = current ? current.headersSent : current === undefined && (socket as Duplex & { bytesWritten?: number }).bytesWritten !== 0;
    if (socket.writable && !begun) {
      const answer = unparsedRequestAnswer(err.code, (err as NodeJS.ErrnoException & { rawPacket?: Buffer }).rawPacket);
      socket.write(answer.text);
      // Sent only if the system took it whole: destroying the socket drops what still waits. A
      // client that ended its side mid-request (the parser's end-of-stream error) has gone: its
      // request is logged aborted, as one whose connection was cut.
      if (socket.writableLength === 0 && err.code !== 'HPE_INVALID_EOF_STATE') noteServerAnswer(socket, answer.status, answer.reason);
    }
    socket.destroy(err);
  });
  // CONNECT asks for a tunnel, which Node hands to 'connect' listeners instead of the routes: with
  // none, it closed the connection without a word, and a client whose proxy setting (HTTPS_PROXY)
  // named the registry read "socket hang up". Not a proxy: 501, saying so.
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) => {
    socket.on('error', () => undefined);
    socket.end(CONNECT_ANSWER.text, () => socket.destroy());
  });
}

const CONNECT_ANSWER = jsonAnswer(
  501,
  'Not Implemented',
  'UNIMPLEMENTED',
  'METHOD_NOT_IMPLEMENTED',
  'CONNECT is not implemented: this server is an A2A registry, not a proxy. If a proxy setting (HTTPS_PROXY, HTTP_PROXY) names it, remove it and send requests to the registry directly.',
);
