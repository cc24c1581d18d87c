/**
 * What the registry knows about an entry beyond its document, as facts beside the owner:
 * whether its card's signatures verified (trust) and where the registry fetches it and how its
 * last check went (freshness). Each shows only when the registry reports it.
 */
import { ExternalLink, OWN_KEY_SET, formatDate } from '../components';
import type { EntryView } from '../api';
import { Foreign } from '../foreign';

const SIGNATURE_LABEL = { verified: 'verified', 'unknown-key': 'key not trusted here', invalid: 'invalid' } as const;
const HEALTH_LABEL = { ok: 'Reachable', unreachable: 'Unreachable', invalid: 'Invalid live document' } as const;

/**
 * `current`: the entry's current revision, when an older one is shown. Source, health and drift are
 * the entry's now (drift compares the live document with the current revision; the source is where
 * it is fetched from now, which need not be where the older one came from), not the older one's:
 * said so, not "the revision stored here", as `get --revision` labels them `now` in the CLI.
 */
export function StatusFacts({ entry, current }: { entry: EntryView; current?: number }) {
  const signatures = entry.signatures ?? [];
  const { source, health } = entry;
  return (
    <>
      {entry.kind === 'agent' && (entry.verified !== undefined || signatures.length > 0) && (
        <>
          <dt>Signature</dt>
          <dd class="signatures">
            {signatures.length === 0 ? (
              <span class="muted">The card is not signed.</span>
            ) : (
              <ul class="plain">
                {signatures.map((s, i) => (
                  <li>
                    <span class={`badge ${s.status === 'verified' ? 'ok' : s.status === 'invalid' ? 'bad' : 'subtle'}`}>{SIGNATURE_LABEL[s.status] ?? s.status}</span>{' '}
                    {signatures.length > 1 && `#${i + 1} `}
                    {/* The alg and kid are the signer's own header values (any text), and the reason quotes them:
                        Foreign, or a right-to-left override in a kid reversed the rest of the line. */}
                    {s.alg && (
                      <code>
                        <Foreign text={s.alg} />
                      </code>
                    )}{' '}
                    {s.kid && (
                      <>
                        key{' '}
                        <code>
                          <Foreign text={s.kid} />
                        </code>
                      </>
                    )}
                    {s.jwks && (s.jwks === OWN_KEY_SET ? <> of the registry operator's own keys</> : <> from <ExternalLink url={s.jwks} /></>)}
                    {s.reason && (
                      <span class="muted">
                        {' '}
                        (<Foreign text={s.reason} />)
                      </span>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </dd>
        </>
      )}
      {source && (
        <>
          <dt>{current === undefined ? 'Source' : 'Source now'}</dt>
          <dd>
            <ExternalLink url={source.url} /> <span class="muted">(fetched {formatDate(source.fetchedAt)})</span>
          </dd>
        </>
      )}
      {health && (
        <>
          <dt>{current === undefined ? 'Health' : 'Health now'}</dt>
          <dd>
            {HEALTH_LABEL[health.status as keyof typeof HEALTH_LABEL] ?? health.status} since {formatDate(health.since)}
            {health.failures > 0 && `, ${health.failures} failed check${health.failures === 1 ? '' : 's'}`}
            {/* Failures of several kinds (invalid, then unreachable): the run began before this status. */}
            {health.failingSince && health.failingSince !== health.since && ` in a row since ${formatDate(health.failingSince)}`}; last checked {formatDate(health.checkedAt)}
            {/* Foreign: the message quotes what the live server sent (a body that is not JSON, an MCP
                error's message); a bidirectional control in it reversed the rest of the line, the
                page's own words after it included. */}
            {health.message && (
              <span class="muted">
                {' '}
                (<Foreign text={health.message} />)
              </span>
            )}
            {entry.drift === true && (current === undefined ? <>. The live document differs from the revision stored here.</> : <>. The live document differs from the current revision, {current}.</>)}
          </dd>
        </>
      )}
    </>
  );
}
