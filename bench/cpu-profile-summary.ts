/**
 * Self time of V8 CPU profiles (`npm run bench -- --cpu-prof` writes them to
 * bench/results/cpu-profiles/): by module (a package, a Node internal module or a file of the repo)
 * and by function, in ms and % of the sampled time.
 *
 * Usage: `npx node bench/cpu-profile-summary.ts [--from <s>] [--to <s>] [--top <n>] <file.cpuprofile>...`
 * `--from`/`--to` keep the samples between those seconds after the profile's start (one query's
 * run: the bench runs them in turn, so the busy seconds of a profile tell them apart); `--top` rows
 * per table (30). The V8 profiler samples wall time: a thread preempted inside a system call (a
 * socket write on a loaded machine) is counted there, so compare shares between runs of one machine
 * state, not absolute ms.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** The members of a `.cpuprofile` (Chrome DevTools protocol `Profiler.Profile`) read here. */
interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  /** µs since the previous sample, one per sample. */
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { from: { type: 'string' }, to: { type: 'string' }, top: { type: 'string' } },
});
const fromUs = Number(values.from ?? 0) * 1e6;
const toUs = values.to === undefined ? Number.POSITIVE_INFINITY : Number(values.to) * 1e6;
const top = Number(values.top ?? 30);

/** The repo-relative or package-relative name of a script URL. */
function scriptName(url: string): string {
  return url
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\//, 'npm:')
    .replace(`${process.cwd()}/`, '');
}

/** The module of a script: its package (`npm:@scope/name`), Node module or repo file. */
function moduleOf(script: string, functionName: string): string {
  if (!script) return `(${functionName})`;
  if (!script.startsWith('npm:')) return script;
  const parts = script.slice(4).split('/');
  return `npm:${parts.slice(0, parts[0]!.startsWith('@') ? 2 : 1).join('/')}`;
}

const byModule = new Map<string, number>();
const byFunction = new Map<string, number>();
let totalUs = 0;
const add = (map: Map<string, number>, key: string, us: number) => map.set(key, (map.get(key) ?? 0) + us);
for (const file of positionals) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]));
  let at = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at < fromUs || at >= toUs) return;
    const frame = frames.get(id)!;
    const script = scriptName(frame.url);
    totalUs += delta;
    add(byModule, moduleOf(script, frame.functionName), delta);
    add(byFunction, `${frame.functionName || '(anonymous)'} ${script}:${frame.lineNumber + 1}`, delta);
  });
}

/** Prints the `top` largest entries of `map`. */
function print(title: string, map: Map<string, number>): void {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const share = ((100 * us) / totalUs).toFixed(1).padStart(5);
    console.log(`${share} % ${(us / 1000).toFixed(0).padStart(7)} ms  ${name}`);
  }
}

console.log(`${(totalUs / 1000).toFixed(0)} ms sampled in ${positionals.length} profile(s)`);
print('Self time by module', byModule);
print('Self time by function', byFunction);
