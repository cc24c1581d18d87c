/**
 * The Node.js options a child process of a test takes to run a TypeScript source as the test
 * files themselves run (typescript-hooks.mjs): `spawn(process.execPath, [...RUN_TYPESCRIPT, file])`.
 * By URL, so the child's working directory does not matter.
 */
export const RUN_TYPESCRIPT: readonly string[] = ['--import', new URL('./typescript-hooks.mjs', import.meta.url).href];
