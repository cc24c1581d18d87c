/**
 * The validation API other layers (operations, registry service, CLI) are written against.
 * Kept in its own module so that importing the types never pulls in ajv.
 */
import type { EntryKind, Finding } from '../contract/types.js';
import type { WrittenText } from '../contract/subject.js';

export type { WrittenText } from '../contract/subject.js';

export type Generation = '0.3' | '1.0';

export type VerdictErrorCode = 'VALIDATION_FAILED' | 'TOO_LARGE' | 'UNSUPPORTED_VERSION';

export interface Verdict {
  valid: boolean;
  kind: EntryKind;
  /** Agents: the detected card generation (absent when it could not be determined). */
  generation?: Generation;
  /** Set iff !valid. */
  errorCode?: VerdictErrorCode;
  /** Set iff !valid: one line for people that says what is wrong and what to do. */
  message?: string;
  sizeBytes: number;
  /** At most MAX_FINDINGS, each with a JSON Pointer path relative to the validated document. */
  errors: Finding[];
  /** Problems that do not block registration. At most MAX_FINDINGS. */
  warnings: Finding[];
}

export interface ValidatorOptions {
  /** Size limit of one document in bytes (the registry's default configuration is 10,240). */
  maxDocumentBytes: number;
  /** Warn about plain-http URLs (on when the registry itself is served over https). */
  warnInsecureHttp?: boolean;
  /** Compile every schema when the validator is made (default); false: each when first needed. */
  compileEagerly?: boolean;
}

/**
 * `written`: the document's text as its author wrote it, when the caller has it (a file part, a
 * fetched card, the CLI's files; not a data part, which arrives parsed with its request). What
 * only the text shows is checked on it (./json-fidelity.ts): a key given twice, a number
 * rounded as it is read.
 */
export interface DocumentValidator {
  /** `sizeBytes`: decoded file bytes, or the compact JSON serialisation of a data-part document. */
  validateAgentCard(card: unknown, sizeBytes: number, written?: WrittenText): Verdict;
  /** Paths are relative to the stored document {mcpServer, toolspec}: "/mcpServer/url", "/toolspec/tools/0/name". */
  validateMcpServer(server: unknown, toolspec: unknown, toolspecSizeBytes: number, written?: WrittenText): Verdict;
  /** A toolspec without its server metadata (same paths, under "/toolspec"). */
  validateToolspec(toolspec: unknown, toolspecSizeBytes: number, written?: WrittenText): Verdict;
}

/** Findings lists are bounded so that a pathological document cannot produce a huge answer: as every refusal's (contract/findings.ts). */
export { MAX_FINDINGS } from '../contract/findings.js';
