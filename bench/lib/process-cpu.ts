/**
 * CPU time a process has used so far, in ms (Linux /proc; undefined elsewhere, or once it has
 * exited). Its time per request is what a busy machine disturbs least: requests per second follow
 * the share of the cores a process gets, its CPU per request far less.
 */
import fs from 'node:fs';

/** Clock ticks a second (USER_HZ: 100 on Linux). */
const CLOCK_TICKS = 100;

export function cpuMsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // After "(comm) " (the last one: a command name may hold ") " itself), state comes first;
    // utime and stime (fields 14 and 15 of stat) are then the 12th and 13th, in clock ticks.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
