/**
 * Validation throughput, in process: `npx tsx bench/validation.ts` (or `npm run bench:validation`).
 *
 * Measures validations per second of a typical A2A v1.0 card (~1.6 KB: 2 skills, 1 interface,
 * provider, docs URL), a typical MCP toolspec (~2.3 KB: 3 tools with draft-07 and 2020-12
 * input schemas), JSON.parse of each on its own, and the failure path (an invalid card, which
 * is re-validated with allErrors and translated). Also reports the one-off construction cost
 * (compiling every schema). Each figure is the median of several timed rounds after warm-up.
 */
import { compactJsonBytes, createDocumentValidator } from '../src/validation/index.js';

const card = {
  name: 'Invoice Agent',
  description: 'Extracts, validates and translates supplier invoices; answers questions about payment status.',
  version: '2.3.1',
  supportedInterfaces: [
    { url: 'https://invoices.acme-corp.io/a2a/v1', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'https://invoices.acme-corp.io/a2a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
  ],
  provider: { organization: 'ACME Corp', url: 'https://acme-corp.io' },
  documentationUrl: 'https://acme-corp.io/docs/invoice-agent',
  capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
  securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } } },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  defaultInputModes: ['text/plain', 'application/pdf'],
  defaultOutputModes: ['text/plain', 'application/json'],
  skills: [
    {
      id: 'extract-invoice',
      name: 'Extract invoice data',
      description: 'Reads a PDF or scanned invoice and returns supplier, amounts, VAT and due date as JSON.',
      tags: ['finance', 'invoices', 'ocr', 'extraction'],
      examples: ['Extract the totals from this invoice', 'What is the due date of the attached bill?'],
      inputModes: ['application/pdf', 'image/png'],
      outputModes: ['application/json'],
    },
    {
      id: 'translate-invoice',
      name: 'Translate invoice',
      description: 'Translates an invoice into English, German, French, Italian or Spanish, keeping the layout.',
      tags: ['finance', 'translation', 'invoices'],
      examples: ['Translate this invoice to German', 'Traduci questa fattura in inglese'],
    },
  ],
};

const toolspec = {
  tools: [
    {
      name: 'search_files',
      title: 'Search files',
      description: 'Full-text search over the files of a workspace; returns paths and matching lines.',
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: {
          query: { type: 'string', minLength: 1, description: 'Words or a quoted phrase' },
          path: { type: 'string', pattern: '^[A-Za-z0-9_./-]*$', description: 'Directory to search in' },
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        },
        required: ['query'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    {
      name: 'read_file',
      description: 'Returns the content of one file, optionally a line range.',
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          range: { $ref: '#/$defs/range' },
        },
        required: ['path'],
        $defs: { range: { type: 'object', properties: { from: { type: 'integer' }, to: { type: 'integer' } } } },
      },
      outputSchema: { type: 'object', properties: { content: { type: 'string' }, lines: { type: 'integer' } } },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'write_file',
      description: 'Creates or replaces a file with the given content.',
      inputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' }, mode: { enum: ['create', 'replace'] } },
        required: ['path', 'content'],
      },
      annotations: { destructiveHint: true, idempotentHint: true },
    },
  ],
};
const server = { name: 'Workspace files', url: 'https://files.acme-corp.io/mcp', version: '1.4.0' };
const invalidCard = {
  ...card,
  protocolVersion: '1.0',
  capabilities: ['streaming'],
  skills: [{ id: 'x', name: 'X', description: 'no tags' }, 'translate'],
};

/** Median validations per second of `fn`, printed; also returned for the ratios at the end. */
function rate(label: string, fn: () => unknown, rounds = 7, minMs = 300): number {
  for (let i = 0; i < 2000; i++) fn(); // warm-up: let V8 optimise the validators
  const perSecond: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let n = 0;
    const start = performance.now();
    let elapsed = 0;
    while (elapsed < minMs) {
      for (let i = 0; i < 200; i++) fn();
      n += 200;
      elapsed = performance.now() - start;
    }
    perSecond.push((n / elapsed) * 1000);
  }
  perSecond.sort((a, b) => a - b);
  const median = perSecond[Math.floor(perSecond.length / 2)]!;
  console.log(`${label.padEnd(52)} ${Math.round(median).toLocaleString('en-US').padStart(10)} /s   (${(1e6 / median).toFixed(1)} µs each)`);
  return median;
}

const t0 = performance.now();
const validator = createDocumentValidator({ maxDocumentBytes: 10_240, warnInsecureHttp: true });
const constructMs = performance.now() - t0;

const cardText = JSON.stringify(card, null, 2);
const toolspecText = JSON.stringify(toolspec, null, 2);
const cardBytes = Buffer.byteLength(cardText);
const toolspecBytes = Buffer.byteLength(toolspecText);

// Sanity: the bench documents must be what they claim to be.
const ok = validator.validateAgentCard(card, cardBytes);
const okTools = validator.validateMcpServer(server, toolspec, toolspecBytes);
const bad = validator.validateAgentCard(invalidCard, compactJsonBytes(invalidCard));
if (!ok.valid || !okTools.valid || bad.valid) throw new Error('bench documents do not have the expected verdicts');

console.log(`Node ${process.version}, ${process.platform}/${process.arch}`);
console.log(`createDocumentValidator (loads the precompiled validators; compiles every schema without a build): ${constructMs.toFixed(0)} ms`);
console.log(`v1.0 card: ${cardBytes} bytes pretty, ${compactJsonBytes(card)} compact; toolspec: ${toolspecBytes} bytes pretty, ${compactJsonBytes(toolspec)} compact (3 tools)\n`);
const cardValidate = rate('v1.0 card: validateAgentCard (valid)', () => validator.validateAgentCard(card, cardBytes));
const cardParse = rate('v1.0 card: JSON.parse only', () => JSON.parse(cardText));
rate('v1.0 card: JSON.parse + validateAgentCard', () => validator.validateAgentCard(JSON.parse(cardText), cardBytes));
const toolsValidate = rate('toolspec: validateMcpServer (valid)', () => validator.validateMcpServer(server, toolspec, toolspecBytes));
const toolsParse = rate('toolspec: JSON.parse only', () => JSON.parse(toolspecText));
rate('toolspec: JSON.parse + validateMcpServer', () => validator.validateMcpServer(server, JSON.parse(toolspecText), toolspecBytes));
rate('invalid v1.0 card: validateAgentCard (explain path)', () => validator.validateAgentCard(invalidCard, 1500));
// Ratios are steadier than absolute figures on a shared machine.
console.log(`\nvalidating costs ${(cardParse / cardValidate).toFixed(2)}× a JSON.parse of the card, ${(toolsParse / toolsValidate).toFixed(2)}× one of the toolspec`);
