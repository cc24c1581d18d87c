/**
 * An entry's revisions and a line diff between any two of them (of the documents as registered,
 * pretty-printed). The pair compared is in the URL (?from=&to=), so a diff can be shared.
 */
import { structuredPatch, type StructuredPatchHunk } from 'diff';
import { useEffect, useRef, useState } from 'preact/hooks';
import { isAbort, type RevisionSummary } from '../api';
import { ErrorNotice, formatDate, needsToken, TokenPrompt, useRetry } from '../components';
import { config } from '../config';
import { Foreign } from '../foreign';
import { pretty } from './untrusted';
import { clipped } from '../../../src/lib/clipped';

export interface HistoryProps {
  revisions: RevisionSummary[];
  /** The revision the page shows. */
  shown: number;
  /** Another revision is on its way: the table (which marks the one shown) is busy; the notices and the comparison's status, live regions, are not. */
  switching: boolean;
  from?: number;
  to?: number;
  /** The link's from and to that are no revision number (from=abc, 0, 2.5: edited by hand): nothing is compared, and the page says why. */
  notNumbers: string[];
  revisionUrl(revision: number): string;
  compare(from: number, to: number): void;
  load(revision: number, signal: AbortSignal): Promise<unknown>;
}

export function History(props: HistoryProps) {
  const { revisions, shown } = props;
  const latest = revisions[0]?.revision;
  const numbers = revisions.map((r) => r.revision);
  // A comparison link outlives its revisions (they leave after REGISTRY_MAX_REVISIONS), or was
  // edited: a revision not listed is no select's option (it would draw blank) and is not compared.
  const listed = (n: number | undefined): n is number => n !== undefined && numbers.includes(n);
  const unlisted = [props.from, props.to].filter((n): n is number => n !== undefined && !listed(n));
  // The registry lists the newest revisions only (config.maxRevisionsListed): as many listed, older
  // ones may still be kept (REGISTRY_MAX_REVISIONS above it, or an admin's revisions, which it
  // exempts), and "no longer kept" said so of revisions ?revision= still opened.
  const cut = revisions.length >= config.maxRevisionsListed;
  const oldest = numbers[numbers.length - 1];
  // A number past the newest (mistyped, or a link made ahead) is no trimmed revision: neither
  // "old revisions leave it" nor "an older one may still be kept" explains it.
  const ahead = latest !== undefined && unlisted.some((n) => n > latest);
  const [from, setFrom] = useState(listed(props.from) ? props.from : (revisions[1]?.revision ?? latest ?? 1));
  const [to, setTo] = useState(listed(props.to) ? props.to : (latest ?? 1));
  useEffect(() => {
    if (listed(props.from)) setFrom(props.from);
    if (listed(props.to)) setTo(props.to);
  }, [props.from, props.to]);
  const notCompared = useRef<HTMLDivElement>(null);
  // Asked for by a link: brought into view, as a comparison is.
  useEffect(() => notCompared.current?.scrollIntoView({ block: 'start' }), [props.from, props.to, props.notNumbers.join()]);
  const { notNumbers } = props;

  return (
    <section aria-labelledby="history-h" id="history">
      <h2 id="history-h">History</h2>
      {oldest !== undefined && oldest > 1 && (
        <p class="muted small">
          {cut
            ? `Only the newest ${revisions.length} revisions are listed; older ones may still be kept: ?revision=N in the address opens revision N.`
            : `Older revisions than ${oldest} are no longer kept.`}
        </p>
      )}
      <table class="revisions" aria-busy={props.switching}>
        <caption class="visually-hidden">Revisions, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Revision</th>
            <th scope="col">Stored</th>
          </tr>
        </thead>
        <tbody>
          {revisions.map((r) => (
            <tr aria-current={r.revision === shown ? 'true' : undefined}>
              <td>
                {r.revision === shown ? <strong>{r.revision} (shown)</strong> : <a href={props.revisionUrl(r.revision)}>{r.revision}</a>}
                {r.revision === latest && <span class="badge subtle">current</span>}
              </td>
              <td>{formatDate(r.updatedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {revisions.length > 1 ? (
        <form
          class="compare-form"
          onSubmit={(e) => {
            e.preventDefault();
            props.compare(from, to);
          }}
        >
          <RevisionSelect id="diff-from" label="From revision" value={from} numbers={numbers} onChange={setFrom} />
          <RevisionSelect id="diff-to" label="To revision" value={to} numbers={numbers} onChange={setTo} />
          <button type="submit">Compare</button>
        </form>
      ) : (
        <p class="muted">This is the only revision.</p>
      )}
      {notNumbers.length > 0 && (
        // As a revision=abc link is told (the entry page): not left to look as if the link compared nothing by itself.
        <div class="notice" role="status" ref={notCompared}>
          <p>
            This link compares {notNumbers.length === 1 ? 'revision ' : 'revisions '}
            {notNumbers.map((v, i) => (
              <>
                {i > 0 && ' and '}
                <code class="url">
                  <Foreign text={linkValue(v)} />
                </code>
              </>
            ))}
            , which {notNumbers.length === 1 ? 'is not a revision number' : 'are not revision numbers'} (1, 2, 3…): nothing is compared.
            {revisions.length > 1 ? ' Choose two revisions above and Compare.' : ''}
          </p>
        </div>
      )}
      {notNumbers.length === 0 && (props.from === undefined) !== (props.to === undefined) && (
        // A link cut short (?from=2, its &to=3 lost when shared): not left to look as if it compared nothing by itself.
        <div class="notice" role="status" ref={notCompared}>
          <p>
            This link names only one revision to compare (<code class="url">{props.from === undefined ? `to=${props.to}` : `from=${props.from}`}</code>): nothing is compared.
            {revisions.length > 1 ? ' Choose the other above and Compare.' : ''}
          </p>
        </div>
      )}
      {notNumbers.length > 0 ? null : unlisted.length > 0 ? (
        <div class="notice" role="status" ref={notCompared}>
          <p>
            This link compares {unlisted.length === 1 ? `revision ${unlisted[0]}, which is` : `revisions ${unlisted.join(' and ')}, which are`}{' '}
            {ahead
              ? `not in this entry's history (its current revision is ${latest}).`
              : cut
              ? `not listed here (only the newest ${revisions.length} are, ${oldest}–${numbers[0]}; an older one may still be kept: ?revision=${unlisted[0]} in the address opens it).`
              : `not in this entry's history (old revisions leave it${numbers.length > 0 ? `; it keeps ${numbers.length === 1 ? `revision ${numbers[0]}` : `revisions ${oldest}–${numbers[0]}`}` : ''}).`}
            {revisions.length > 1 ? ' Choose two of them above and Compare.' : ''}
          </p>
        </div>
      ) : (
        props.from !== undefined && props.to !== undefined && <Diff from={props.from} to={props.to} load={props.load} />
      )}
    </section>
  );
}

/** A value from a link, as a notice quotes it: a long one (a garbled link) cut at 40 characters, never inside an emoji. */
export const linkValue = (value: string): string => clipped(value, 40);

type DiffState = { state: 'loading' } | { state: 'failed'; error: unknown } | { state: 'done'; hunks: StructuredPatchHunk[]; added: number; removed: number };

function Diff({ from, to, load }: { from: number; to: number; load: HistoryProps['load'] }) {
  const [diff, setDiff] = useState<DiffState>({ state: 'loading' });
  const retry = useRetry(`${from}-${to}`);
  const box = useRef<HTMLDivElement>(null);
  const heading = useRef<HTMLHeadingElement>(null);
  // Asked for (Compare, or a shared link): bring it into view.
  useEffect(() => box.current?.scrollIntoView({ block: 'start' }), [from, to]);
  useEffect(() => {
    const controller = new AbortController();
    setDiff({ state: 'loading' });
    Promise.all([load(from, controller.signal), load(to, controller.signal)])
      .then(([a, b]) => {
        const patch = structuredPatch(`revision ${from}`, `revision ${to}`, `${pretty(a)}\n`, `${pretty(b)}\n`, undefined, undefined, { context: 3 });
        const lines = patch.hunks.flatMap((h) => h.lines);
        setDiff({
          state: 'done',
          hunks: patch.hunks,
          added: lines.filter((l) => l.startsWith('+')).length,
          removed: lines.filter((l) => l.startsWith('-')).length,
        });
      })
      .catch((error: unknown) => {
        if (!isAbort(error)) setDiff({ state: 'failed', error });
      });
    return () => controller.abort();
  }, [from, to, retry.attempt]);
  // Compared with a token typed in its prompt: the prompt, and the focus in it, are gone; the focus goes to the comparison.
  useEffect(() => {
    if (diff.state === 'done' && retry.withTypedToken) heading.current?.focus();
  }, [diff]);

  return (
    <div class="diff" ref={box}>
      <h3 ref={heading} tabIndex={-1}>
        Changes from revision {from} to revision {to}
      </h3>
      {/* Only what the comparison found is announced: a live region around the table read every
          line of the diff aloud at once. The table is read when the person reaches it. */}
      <div role="status">
        {diff.state === 'loading' && <p class="muted">Loading both revisions…</p>}
        {diff.state === 'done' && diff.hunks.length === 0 && <p>The two revisions hold the same document.</p>}
        {diff.state === 'done' && diff.hunks.length > 0 && (
          <p class="diff-summary">
            <span class="added-count">+{diff.added}</span> <span class="removed-count">−{diff.removed}</span> lines
          </p>
        )}
      </div>
      {diff.state === 'failed' && (
        <ErrorNotice
          id="compare-refusal"
          error={retry.said(diff.error)}
          title="A revision could not be loaded"
          onRetry={() => retry.again(heading.current)}
        />
      )}
      {/* A token refused meanwhile (or a registry closed to anonymous reads): typed here, as on the
          other pages. A field of its own: the download's prompt may be shown beside it. */}
      {diff.state === 'failed' && needsToken(diff.error) && <TokenPrompt id="compare-token" refusal="compare-refusal" {...retry.prompt} />}
      {diff.state === 'done' && diff.hunks.length > 0 && (
        <>
          {/* A region the keyboard can scroll (focusable, named, as the validate page's document):
              at 320 px the diff's lines are wider than the window and scroll inside it. */}
          <div class="diff-scroll" tabIndex={0} role="region" aria-label="Line diff">
            <table class="diff-table">
              <caption class="visually-hidden">Line diff; removed lines are marked with a minus, added lines with a plus</caption>
              {diff.hunks.map((hunk) => (
                <Hunk hunk={hunk} />
              ))}
            </table>
          </div>
        </>
      )}
    </div>
  );
}

function Hunk({ hunk }: { hunk: StructuredPatchHunk }) {
  let oldLine = hunk.oldStart;
  let newLine = hunk.newStart;
  return (
    <tbody>
      <tr class="hunk-head">
        <td colSpan={3}>
          Lines {hunk.oldStart}–{hunk.oldStart + Math.max(0, hunk.oldLines - 1)} → {hunk.newStart}–{hunk.newStart + Math.max(0, hunk.newLines - 1)}
        </td>
      </tr>
      {hunk.lines
        .filter((line) => !line.startsWith('\\'))
        .map((line) => {
          const sign = line[0];
          const text = line.slice(1);
          if (sign === '+') {
            return (
              <tr class="line-added">
                <td class="ln" />
                <td class="ln">{newLine++}</td>
                <td class="text">
                  <ins>
                    <span class="visually-hidden">added: </span>
                    {text}
                  </ins>
                </td>
              </tr>
            );
          }
          if (sign === '-') {
            return (
              <tr class="line-removed">
                <td class="ln">{oldLine++}</td>
                <td class="ln" />
                <td class="text">
                  <del>
                    <span class="visually-hidden">removed: </span>
                    {text}
                  </del>
                </td>
              </tr>
            );
          }
          return (
            <tr>
              <td class="ln">{oldLine++}</td>
              <td class="ln">{newLine++}</td>
              <td class="text">{text}</td>
            </tr>
          );
        })}
    </tbody>
  );
}

function RevisionSelect(props: { id: string; label: string; value: number; numbers: number[]; onChange: (n: number) => void }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} value={String(props.value)} onChange={(e) => props.onChange(Number(e.currentTarget.value))}>
        {props.numbers.map((n) => (
          <option value={String(n)}>{n}</option>
        ))}
      </select>
    </div>
  );
}
