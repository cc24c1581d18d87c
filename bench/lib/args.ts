/**
 * Conversions the benches share for their command-line options: node:util's parseArgs hands
 * every value over as a string.
 */

/** A comma list of sizes or counts (`10000,100000`); items that are not positive numbers are dropped. */
export function positiveNumbers(text: string): number[] {
  return text.split(',').map(Number).filter((n) => n > 0);
}

/** A whole count of at least one (runs, pages): anything else, or nothing usable, counts as 1. */
export function atLeastOne(text: string): number {
  return Math.max(1, Math.floor(Number(text)) || 1);
}
