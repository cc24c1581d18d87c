/**
 * What a document file is and what is wrong with one misshapen (validation/document-shape.ts, the
 * rule the registry's file parts follow too), and the words for a file that cannot be read:
 * shared by validate, register and import, so that the three read a file alike. Kept apart from
 * the validator (ajv and the schemas) so that `register`, which leaves the checks to the
 * registry, does not load it.
 */
import { inputName } from './bounded-read.js';

export { detectKind, isAgentCardShaped, misshapenDocument, type DocumentKind, type Misshapen } from '../validation/document-shape.js';

/** The registry's default REGISTRY_MAX_DOCUMENT_BYTES. */
export const DEFAULT_MAX_BYTES = 10_240;

/** "cannot read card.json: no such file", for every command that reads a file. */
export function readProblem(file: string, err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
  return `cannot read ${inputName(file)}: ${why}`;
}
