/** An A2A agent card (v1.0 or v0.3) rendered for people. */
import { cardAnchors } from '../card-anchor';
import { ExternalLink } from '../components';
import { FoldedCards } from './folded-cards';
import { arr, bool, obj, show, str, strings, type Json } from './untrusted';

/**
 * Between two facts on a line ("Example Ltd · https://…"): the dot goes with what follows it. With
 * a plain space after it, a narrow window (320 px) broke the line there and left the dot alone at
 * the end of the first line, pointing at nothing.
 */
const SEPARATOR = ' ·\u00a0';

/** `matched` and `target`: the skills a search matched and the one the URL points at, shown however many there are (FoldedCards). */
export function AgentCardView({ card, matched, target }: { card: Json; matched: ReadonlySet<string>; target: string | undefined }) {
  const provider = obj(card.provider);
  return (
    <>
      <section aria-labelledby="about-h">
        <h2 id="about-h">About</h2>
        <dl class="facts">
          {str(card.version) && (
            <>
              <dt>Version</dt>
              <dd>{str(card.version)}</dd>
            </>
          )}
          {provider && (
            <>
              <dt>Provider</dt>
              <dd>
                <bdi>{str(provider.organization) ?? 'unnamed'}</bdi>
                {str(provider.url) && (
                  <>
                    {SEPARATOR}
                    <ExternalLink url={provider.url} />
                  </>
                )}
              </dd>
            </>
          )}
          {str(card.documentationUrl) && (
            <>
              <dt>Documentation</dt>
              <dd>
                <ExternalLink url={card.documentationUrl} />
              </dd>
            </>
          )}
          <dt>Input modes</dt>
          <dd>{modes(card.defaultInputModes)}</dd>
          <dt>Output modes</dt>
          <dd>{modes(card.defaultOutputModes)}</dd>
          {arr(card.signatures).length > 0 && (
            <>
              <dt>Signatures</dt>
              <dd>{arr(card.signatures).length} (JWS over the card)</dd>
            </>
          )}
        </dl>
      </section>
      <Capabilities card={card} />
      <Security card={card} />
      <Skills skills={arr(card.skills)} matched={matched} target={target} />
    </>
  );
}

const modes = (v: unknown) => {
  const list = strings(v);
  return list.length ? list.map((m) => <code class="chip">{m}</code>) : <span class="muted">none</span>;
};

function Capabilities({ card }: { card: Json }) {
  const caps = obj(card.capabilities) ?? {};
  const flags: [string, boolean | undefined][] = [
    ['Streaming (SSE)', bool(caps.streaming)],
    ['Push notifications', bool(caps.pushNotifications)],
    ['Extended agent card', bool(caps.extendedAgentCard) ?? bool(card.supportsAuthenticatedExtendedCard)],
  ];
  if (caps.stateTransitionHistory !== undefined) flags.push(['State transition history (v0.3)', bool(caps.stateTransitionHistory)]);
  const extensions = arr(caps.extensions).map(obj).filter((e): e is Json => e !== undefined);
  return (
    <section aria-labelledby="caps-h">
      <h2 id="caps-h">Capabilities</h2>
      <ul class="flags">
        {flags.map(([label, on]) => (
          <li class={on ? 'on' : 'off'}>
            <span aria-hidden="true">{on ? '✓' : '✗'}</span> {label}
            <span class="visually-hidden">{on ? ': yes' : ': no'}</span>
          </li>
        ))}
      </ul>
      {extensions.length > 0 && (
        <>
          <h3>Extensions</h3>
          <ul>
            {extensions.map((ext) => (
              <li>
                <ExternalLink url={ext.uri} />
                {ext.required === true && <span class="badge warn">required</span>}
                {str(ext.description) && <p class="prose" dir="auto">{str(ext.description)!.trim()}</p>}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** One security scheme, v1.0 (`{apiKeySecurityScheme: {...}}`) or v0.3 (`{"type": "apiKey", ...}`). */
function describeScheme(value: unknown): { type: string; details: [string, unknown][]; description?: string } {
  const scheme = obj(value) ?? {};
  const v1 = (key: string) => obj(scheme[key]);
  const of = (s: Json, ...keys: string[]): [string, unknown][] => keys.filter((k) => s[k] !== undefined).map((k) => [k, s[k]]);
  const flows = (s: Json): [string, unknown][] =>
    Object.entries(obj(s.flows) ?? {}).map(([name, flow]) => {
      const f = obj(flow) ?? {};
      const scopes = Object.keys(obj(f.scopes) ?? {});
      const urls = ['authorizationUrl', 'tokenUrl', 'refreshUrl', 'deviceAuthorizationUrl'].filter((k) => str(f[k])).map((k) => `${k}: ${String(f[k])}`);
      return [`flow ${name}`, [...urls, scopes.length ? `scopes: ${scopes.join(', ')}` : ''].filter(Boolean).join(SEPARATOR)];
    });
  let s: Json | undefined;
  if ((s = v1('apiKeySecurityScheme'))) return { type: 'API key', details: of(s, 'location', 'name'), description: str(s.description) };
  if ((s = v1('httpAuthSecurityScheme'))) return { type: 'HTTP authentication', details: of(s, 'scheme', 'bearerFormat'), description: str(s.description) };
  if ((s = v1('oauth2SecurityScheme'))) return { type: 'OAuth 2.0', details: [...flows(s), ...of(s, 'oauth2MetadataUrl')], description: str(s.description) };
  if ((s = v1('openIdConnectSecurityScheme'))) return { type: 'OpenID Connect', details: of(s, 'openIdConnectUrl'), description: str(s.description) };
  if ((s = v1('mtlsSecurityScheme'))) return { type: 'Mutual TLS', details: [], description: str(s.description) };
  switch (scheme.type) {
    case 'apiKey':
      return { type: 'API key', details: of(scheme, 'in', 'name'), description: str(scheme.description) };
    case 'http':
      return { type: 'HTTP authentication', details: of(scheme, 'scheme', 'bearerFormat'), description: str(scheme.description) };
    case 'oauth2':
      return { type: 'OAuth 2.0', details: [...flows(scheme), ...of(scheme, 'oauth2MetadataUrl')], description: str(scheme.description) };
    case 'openIdConnect':
      return { type: 'OpenID Connect', details: of(scheme, 'openIdConnectUrl'), description: str(scheme.description) };
    case 'mutualTLS':
      return { type: 'Mutual TLS', details: [], description: str(scheme.description) };
    default:
      return { type: 'Unknown scheme', details: [['as declared', scheme]] };
  }
}

/** Requirements as alternatives, each a set of schemes (with scopes): v1.0 securityRequirements or v0.3 security. */
export function requirements(card: Json): string[][] {
  const v1 = arr(card.securityRequirements).map(obj);
  if (v1.length > 0) {
    return v1.map((r) =>
      Object.entries(obj(r?.schemes) ?? {}).map(([name, scopes]) => {
        const list = strings(obj(scopes)?.list);
        return list.length ? `${name} (${list.join(', ')})` : name;
      }),
    );
  }
  return arr(card.security)
    .map(obj)
    .map((r) =>
      Object.entries(r ?? {}).map(([name, scopes]) => {
        const list = strings(scopes);
        return list.length ? `${name} (${list.join(', ')})` : name;
      }),
    );
}

function Security({ card }: { card: Json }) {
  const schemes = Object.entries(obj(card.securitySchemes) ?? {});
  const needs = requirements(card);
  return (
    <section aria-labelledby="security-h">
      <h2 id="security-h">Security</h2>
      {schemes.length === 0 && needs.length === 0 && <p class="muted">The card declares no authentication.</p>}
      {needs.length > 0 && (
        <>
          <h3>Callers must present</h3>
          <ul class="requirements">
            {needs.map((alternative, i) => (
              <li>
                {i > 0 && <span class="muted">or </span>}
                {alternative.length === 0 ? <em>nothing (anonymous access)</em> : alternative.join(' and ')}
              </li>
            ))}
          </ul>
        </>
      )}
      {schemes.length > 0 && (
        <dl class="schemes">
          {schemes.map(([name, value]) => {
            const s = describeScheme(value);
            return (
              <>
                <dt>
                  <code>{name}</code> <span class="badge subtle">{s.type}</span>
                </dt>
                <dd>
                  {s.description && <p class="prose" dir="auto">{s.description.trim()}</p>}
                  {s.details.length > 0 && (
                    <ul class="plain">
                      {s.details.map(([k, v]) => (
                        <li>
                          <span class="muted">{k}:</span> <span class="mono">{show(v)}</span>
                        </li>
                      ))}
                    </ul>
                  )}
                </dd>
              </>
            );
          })}
        </dl>
      )}
    </section>
  );
}

function Skills({ skills, matched, target }: { skills: unknown[]; matched: ReadonlySet<string>; target: string | undefined }) {
  const list = skills.map(obj).filter((s): s is Json => s !== undefined);
  return (
    <section aria-labelledby="skills-h">
      <h2 id="skills-h">Skills ({list.length})</h2>
      {list.length === 0 && <p class="muted">No skills declared.</p>}
      <FoldedCards
        items={list}
        noun="skills"
        anchors={cardAnchors('skill', list.map((skill) => str(skill.id)))}
        matched={matched}
        target={target}
        render={(skill, anchor) => {
          const examples = strings(skill.examples);
          const tags = strings(skill.tags);
          return (
            <li class="card" id={anchor}>
              <h3>
                <bdi>{str(skill.name) ?? str(skill.id) ?? 'Unnamed skill'}</bdi> {str(skill.id) && <code class="muted">{str(skill.id)}</code>}
              </h3>
              {str(skill.description) && <p class="prose" dir="auto">{str(skill.description)!.trim()}</p>}
              {tags.length > 0 && (
                <p class="tags" aria-label="Tags">
                  {tags.map((t) => (
                    <span class="chip" dir="auto">
                      {t}
                    </span>
                  ))}
                </p>
              )}
              {examples.length > 0 && (
                <>
                  <h4>Examples</h4>
                  <ul class="examples">
                    {examples.map((e) => (
                      <li dir="auto">{e}</li>
                    ))}
                  </ul>
                </>
              )}
              {requirements(skill).length > 0 && (
                <p class="small">
                  <span class="muted">Needs:</span> {requirements(skill).map((alt) => (alt.length ? alt.join(' and ') : 'nothing')).join(' or ')}
                </p>
              )}
              {(strings(skill.inputModes).length > 0 || strings(skill.outputModes).length > 0) && (
                <p class="muted small">
                  {strings(skill.inputModes).length > 0 && <>In: {strings(skill.inputModes).join(', ')}. </>}
                  {strings(skill.outputModes).length > 0 && <>Out: {strings(skill.outputModes).join(', ')}.</>}
                </p>
              )}
            </li>
          );
        }}
      />
    </section>
  );
}
