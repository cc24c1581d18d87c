/**
 * Document validation for the registry: A2A agent cards (v0.3 and v1.0) and MCP servers
 * (metadata + toolspec), against the JSON Schemas in ../../schemas/ plus the checks of the
 * modules below:
 *   detect.ts       which card generation, or why none
 *   card.ts         agent card pipeline        mcp.ts        MCP server pipeline
 *   user-schema.ts  tool input/output schemas checked safely, never compiled
 *   translate.ts    ajv errors -> findings     hints.ts      advice for known mistakes
 *   card-checks.ts, urls.ts  warnings          ajv-instances.ts  compiled validators
 *   precompile.ts   build step: fast validators as generated code, loaded by precompiled.ts
 */
import { getAjvSet } from './ajv-instances.js';
import { validateAgentCard } from './card.js';
import { validateMcpServer } from './mcp.js';
import type { DocumentValidator, ValidatorOptions } from './types.js';

export type { DocumentValidator, Generation, ValidatorOptions, Verdict, VerdictErrorCode, WrittenText } from './types.js';
export { MAX_FINDINGS } from './types.js';
export { compactJsonBytes } from './size.js';
export { validatorOrigins } from './precompiled.js';

/**
 * Builds a validator. The fast validators are readied here (precompiled by the build, or
 * compiled once per process, shared by every validator), so validating a valid document never
 * compiles anything; with `compileEagerly: false` (a command checking a document or two) each is
 * loaded or compiled when first needed. Explaining a failure compiles its schema's all-errors
 * validator the first time (./ajv-instances.ts says why).
 */
export function createDocumentValidator(options: ValidatorOptions): DocumentValidator {
  if (!Number.isInteger(options.maxDocumentBytes) || options.maxDocumentBytes < 1) {
    throw new RangeError(`maxDocumentBytes must be a positive integer, got ${String(options.maxDocumentBytes)}`);
  }
  const opts: ValidatorOptions = { maxDocumentBytes: options.maxDocumentBytes, warnInsecureHttp: options.warnInsecureHttp === true };
  const ajv = getAjvSet({ eager: options.compileEagerly !== false });
  return {
    validateAgentCard: (card, sizeBytes, written) => validateAgentCard(ajv, opts, card, sizeBytes, written),
    validateMcpServer: (server, toolspec, toolspecSizeBytes, written) => validateMcpServer(ajv, opts, server, toolspec, toolspecSizeBytes, true, written),
    validateToolspec: (toolspec, toolspecSizeBytes, written) => validateMcpServer(ajv, opts, undefined, toolspec, toolspecSizeBytes, false, written),
  };
}
