/**
 * A tiny DNS server on 127.0.0.1 (UDP) for REGISTRY_DNS_SERVERS in tests: answers A and AAAA
 * queries from a table, NXDOMAIN for names it does not know, and never answers the names told
 * to stay silent (a resolver that hangs), or a name's queries of one type told to (a forwarder
 * that drops AAAA queries); a type's answers may be sent late. Records every question it was asked.
 */
import dgram from 'node:dgram';
import ipaddr from 'ipaddr.js';

export interface DnsServer {
  /** "127.0.0.1:<port>", as REGISTRY_DNS_SERVERS takes it. */
  address: string;
  /** Every question, in order: the name (lower case) and type ("A", "AAAA", or the number). */
  questions: { name: string; type: string }[];
  /**
   * `name` resolves to `addresses` (IPv4 and IPv6 mixed), or is never answered ('silent'); its
   * queries of the types in `silent` are never answered, those in `lateMs` answered that late.
   */
  set(name: string, addresses: readonly string[] | 'silent', options?: RecordOptions): void;
  close(): Promise<void>;
}

const TYPES: Record<number, string> = { 1: 'A', 28: 'AAAA' };

export interface RecordOptions {
  silent?: readonly ('A' | 'AAAA')[];
  lateMs?: Partial<Record<'A' | 'AAAA', number>>;
}

export async function startDnsServer(): Promise<DnsServer> {
  const table = new Map<string, { addresses: readonly string[] | 'silent'; options: RecordOptions }>();
  const questions: DnsServer['questions'] = [];
  /** Late answers not sent yet: dropped when the server closes. */
  const pending = new Set<NodeJS.Timeout>();
  const socket = dgram.createSocket('udp4');
  socket.on('message', (query, peer) => {
    if (query.length < 12) return;
    // The question: length-prefixed labels up to a zero byte, then QTYPE and QCLASS.
    let at = 12;
    const labels: string[] = [];
    while (at < query.length && query[at] !== 0) {
      labels.push(query.subarray(at + 1, at + 1 + query[at]!).toString('latin1'));
      at += 1 + query[at]!;
    }
    const questionEnd = at + 5;
    if (questionEnd > query.length) return;
    const name = labels.join('.').toLowerCase();
    const qtype = query.readUInt16BE(at + 1);
    questions.push({ name, type: TYPES[qtype] ?? String(qtype) });
    const found = table.get(name);
    const entry = found?.addresses;
    const type = TYPES[qtype] as 'A' | 'AAAA' | undefined;
    if (entry === 'silent' || (type && found?.options.silent?.includes(type))) return;
    const family = qtype === 1 ? 4 : qtype === 28 ? 6 : 0;
    const records = (entry ?? []).map((a) => ipaddr.parse(a)).filter((a) => (a.kind() === 'ipv4' ? 4 : 6) === family);
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    // QR, the query's RD, RA; NXDOMAIN for an unknown name.
    header.writeUInt16BE(0x8080 | (query.readUInt16BE(2) & 0x0100) | (entry ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(records.length, 6);
    const answers = records.map((address) => {
      const bytes = Buffer.from(address.toByteArray());
      const record = Buffer.alloc(12);
      record.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      record.writeUInt16BE(qtype, 2);
      record.writeUInt16BE(1, 4); // IN
      record.writeUInt32BE(60, 6); // TTL
      record.writeUInt16BE(bytes.length, 10);
      return Buffer.concat([record, bytes]);
    });
    const send = (): void => socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answers]), peer.port, peer.address);
    const late = type ? found?.options.lateMs?.[type] : undefined;
    if (!late) return send();
    const timer = setTimeout(() => {
      pending.delete(timer);
      send();
    }, late);
    pending.add(timer);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    questions,
    set: (name, addresses, options = {}) => void table.set(name.toLowerCase(), { addresses, options }),
    close: () => {
      for (const timer of pending) clearTimeout(timer);
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
