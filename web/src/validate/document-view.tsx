/**
 * The document as the person sent it, with line numbers and each problem the registry found
 * marked where it is. Each mark carries the problem's number; the list above links to it.
 */
import type { ComponentChildren } from 'preact';
import type { TextRange } from './locate';

export interface Placed {
  /** 1-based, as listed. */
  number: number;
  severity: 'error' | 'warning';
  range: TextRange;
}

interface Line {
  start: number;
  end: number;
  text: string;
}

function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  let start = 0;
  for (const m of text.matchAll(/\r\n|\n|\r/g)) {
    lines.push({ start, end: m.index, text: text.slice(start, m.index) });
    start = m.index + m[0].length;
  }
  lines.push({ start, end: text.length, text: text.slice(start) });
  return lines;
}

export const anchorOf = (n: number) => `problem-${n}`;

export function DocumentView({ text, placed }: { text: string; placed: Placed[] }) {
  // A problem is drawn on every line its range touches (a range at a line break, on that line).
  const rows = splitLines(text).map((line) => ({
    line,
    here: placed.filter((p) => p.range.start <= line.end && Math.max(p.range.end, p.range.start + 1) > line.start),
  }));
  const anchored = new Set<number>();
  // The numbers' column is as wide as three of them at most; more on a line (a minified document
  // has all its problems on one) wrap below. Unbounded, 17 numbers took 437 px and left the
  // document a column one letter wide, off a phone's screen.
  const widest = Math.min(3, rows.reduce((most, row) => Math.max(most, row.here.length), 1));
  return (
    <div class="doc-scroll" tabIndex={0} role="region" aria-label="Your document with the problems marked">
      <table class={`doc marks-${widest}`}>
        <tbody>
          {rows.map(({ line, here }, index) => {
            const severity = here.some((p) => p.severity === 'error') ? 'error' : here.length ? 'warning' : '';
            return (
              <tr class={severity ? `has-${severity}` : undefined}>
                <td class="ln">{index + 1}</td>
                <td class="marks">
                  {here.map((p) => {
                    const first = !anchored.has(p.number);
                    anchored.add(p.number);
                    return (
                      <a class={`mark-number ${p.severity}`} href={`#item-${anchorOf(p.number)}`} id={first ? anchorOf(p.number) : undefined} tabIndex={first ? 0 : -1}>
                        <span class="visually-hidden">{p.severity} </span>
                        {p.number}
                      </a>
                    );
                  })}
                </td>
                <td class="text">{markLine(line, here)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

/** The line with the parts some problem covers wrapped in <mark>. */
function markLine(line: Line, here: Placed[]): ComponentChildren {
  if (here.length === 0) return line.text || ' ';
  const cuts = new Set<number>([line.start, line.end]);
  for (const p of here) {
    cuts.add(Math.min(Math.max(p.range.start, line.start), line.end));
    cuts.add(Math.min(Math.max(p.range.end, line.start), line.end));
  }
  const points = [...cuts].sort((a, b) => a - b);
  const out: ComponentChildren[] = [];
  let marked = false;
  for (let i = 0; i < points.length - 1; i++) {
    const [a, b] = [points[i]!, points[i + 1]!];
    const piece = line.text.slice(a - line.start, b - line.start);
    const covering = here.filter((p) => p.range.start <= a && p.range.end >= b);
    if (covering.length === 0) out.push(piece);
    else if (piece) {
      out.push(<mark class={covering.some((p) => p.severity === 'error') ? 'error' : 'warning'}>{piece}</mark>);
      marked = true;
    }
  }
  // A problem that covers no character of this line (at its line break, or the end of the file) still shows.
  if (!marked) out.push(<mark class={here.some((p) => p.severity === 'error') ? 'error' : 'warning'}> </mark>);
  return out;
}
