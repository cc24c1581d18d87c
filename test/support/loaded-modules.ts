/**
 * Which modules a child process loaded: NODE_OPTIONS for it that writes each module's URL, one a
 * line, into `report` as it exits (its stdout and stderr stay its own). A refused start that
 * loaded the server's modules first is told by them (startup-refusals.test, cli.test's serve).
 */
import fs from 'node:fs';

export function recordingLoadedModules(report: string): string {
  const hook =
    `import fs from 'node:fs'; import module from 'node:module'; const loaded = [];` +
    `module.registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });` +
    `process.on('exit', () => fs.writeFileSync(${JSON.stringify(report)}, loaded.join('\\n')));`;
  return `${process.env.NODE_OPTIONS ?? ''} --import=data:text/javascript,${encodeURIComponent(hook)}`;
}

/** The URLs `report` holds (recordingLoadedModules). */
export function loadedModules(report: string): string[] {
  return fs.readFileSync(report, 'utf8').split('\n');
}

/** The server's modules (run-server.js, server.js) among `loaded`. */
export const serverModules = (loaded: readonly string[]): string[] => loaded.filter((url) => /\/dist\/src\/(run-server|server)\.js$/.test(url));
