/**
 * A NODE_OPTIONS flag that slows a spawned registry's loading of undici by `ms`, as on a loaded
 * machine (where it takes a second or two): a module hook that blocks when `undici` is resolved.
 * The registry loads undici on its first outbound request; the test process has loaded it long ago.
 */
export const slowUndiciLoad = (ms: number): string =>
  `--import=data:text/javascript,import{registerHooks}from'node:module';registerHooks({resolve(s,c,n){if(s==='undici')Atomics.wait(new%20Int32Array(new%20SharedArrayBuffer(4)),0,0,${ms});return%20n(s,c)}})`;
