// scratch: line-level CPU profile of a list of queries (JSON file of {text, filter}) repeated
import { Session } from 'node:inspector/promises';
import fs from 'node:fs';
import { createSearchIndex } from '/work/wt/lead/.prof/dist/src/search/index.js';

import { readIndexSnapshot } from '/work/wt/lead/.prof/dist/src/search/snapshot-file.js';
const index = createSearchIndex();
const saved = await readIndexSnapshot('/work/bench/search-1m.snapshot', () => undefined); if (!saved.ok) throw new Error('no');
index.loadState(saved.state);
const qs = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const reps = Number(process.env.REPS ?? 30);
const run = () => { for (const q of qs) index.search({ text: q.text, filter: q.filter, offset: 0, limit: 20 }); };
for (let i = 0; i < 5; i++) run();
let t = performance.now(); for (let i = 0; i < 5; i++) run(); console.log(`ms per pass of ${qs.length}: ${((performance.now() - t) / 5).toFixed(2)}`);
const s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.setSamplingInterval', { interval: 50 }); await s.post('Profiler.start');
for (let i = 0; i < reps; i++) run();
const { profile } = await s.post('Profiler.stop');
const lines = new Map(); const fns = new Map(); let total = 0;
const hit = new Map(); for (const id of profile.samples) hit.set(id, (hit.get(id) ?? 0) + 1);
for (const n of profile.nodes) {
  const c = hit.get(n.id) ?? 0; total += c; const f = `${n.callFrame.functionName}@${n.callFrame.url.split('/').pop()}`; fns.set(f, (fns.get(f) ?? 0) + c);
  for (const pt of n.positionTicks ?? []) { const k = `${n.callFrame.url.split('/').pop()}:${pt.line}`; lines.set(k, (lines.get(k) ?? 0) + pt.ticks); }
}
console.log('functions:'); for (const [k, v] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, 14)) console.log((v / total * 100).toFixed(1).padStart(5), k);
console.log('lines:'); for (const [k, v] of [...lines].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.LINES ?? 30))) console.log((v / total * 100).toFixed(1).padStart(5), k);
