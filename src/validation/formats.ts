/**
 * The JSON Schema formats our validators know: ajv-formats' full set, with "regex" checked the
 * way schemas are evaluated (the `u` flag). One module for both the run-time compiler
 * (./ajv-instances.ts) and the precompiled validators, whose generated code refers to FORMATS
 * by name (ajv's `code.formats`), so both run the very same format functions.
 */
import { fullFormats } from 'ajv-formats/dist/formats.js';

/** JSON Schema `pattern`s use ECMA-262 with the `u` flag (ajv's default, `unicodeRegExp`). Only compiled, never run. */
export function isValidRegex(source: string): boolean {
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
}

/** ajv-formats checks "regex" without the u flag; ours uses the flag schemas are evaluated with. */
export const FORMATS = { ...fullFormats, regex: isValidRegex };
