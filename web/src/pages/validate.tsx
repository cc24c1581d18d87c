/**
 * The validate page: paste or drop an agent card or a toolspec, let the registry check it (the
 * `validate` operation: the same checks, errors, paths and hints as `register`), see each
 * problem marked in the document, then register it with a token the person types (kept in
 * sessionStorage only).
 */
import { useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { call, rateWaitLeft, RegistryError, tokenWanted, typedTokenRefused, type Finding, type RegistrationResult, type UploadedDocument, type ValidationResult } from '../api';
import { Countdown, ErrorNotice, needsToken, usePageHeading } from '../components';
import { config, href } from '../config';
import { clipped } from '../../../src/lib/clipped';
import { Foreign } from '../foreign';
import { obj, type Json } from '../entry/untrusted';
import { saveToken, savedToken } from '../token';
import { anchorOf, DocumentView, type Placed } from '../validate/document-view';
import { saveDraft, savedDraft } from '../validate/draft';
import { locate, parseDocument } from '../validate/locate';

/** Refusals that are about the document (shown against it); others (token, limits, network) are shown as they are. */
const DOCUMENT_ERRORS = new Set(['VALIDATION_FAILED', 'TOO_LARGE', 'UNSUPPORTED_VERSION', 'BAD_REQUEST', 'SIGNATURE_INVALID']);

/**
 * A FORBIDDEN is about the document when it has findings, each at the path of a URL the document
 * uses (rules url-taken, identity-taken, url-reserved): shown against it, which field and why, as
 * a validation's errors are (it was only "could not check" or "did not register" and the message).
 * One without findings (not the caller's entry) is about the token, and is shown as it is.
 */
const aboutDocument = (error: unknown): error is RegistryError =>
  error instanceof RegistryError && (DOCUMENT_ERRORS.has(error.code) || (error.code === 'FORBIDDEN' && error.details.length > 0));

/** Refused before sending: far beyond any registry's document limit, and slow to show. */
const MAX_PASTE_BYTES = 1024 * 1024;

type Kind = 'agent-card' | 'toolspec' | 'mcp-document';
const KIND_TEXT: Record<Kind, string> = {
  'agent-card': 'an A2A agent card',
  toolspec: 'an MCP toolspec ({"tools": [...]})',
  'mcp-document': 'an MCP server with its toolspec ({"mcpServer", "toolspec"})',
};

/** What the text looks like; broken JSON is sent as a card, and the registry says what is wrong. */
function detectKind(text: string): Kind {
  try {
    const value = obj(JSON.parse(text));
    // Any `tools` (not only a list): a broken toolspec gets the toolspec's errors ("/tools must
    // be an array"), not an agent card's dozen about fields it never meant to have.
    if (value && 'tools' in value && !('name' in value)) return 'toolspec';
    if (value && 'mcpServer' in value && 'toolspec' in value) return 'mcp-document';
  } catch {
    /* not JSON */
  }
  return 'agent-card';
}

interface ServerMeta {
  name: string;
  url: string;
  description: string;
  version: string;
}

const EXAMPLE_CARD = {
  name: 'Invoice Agent',
  description: 'Translates and checks invoices.',
  version: '1.0.0',
  supportedInterfaces: [{ url: 'https://invoices.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [
    {
      id: 'translate-invoice',
      name: 'Translate invoice',
      description: 'Translates an invoice into another language.',
      tags: ['finance', 'translation'],
      examples: ['Translate this invoice into German'],
    },
  ],
};

/** The operation's arguments and file part for the text, as `validate` or `register`. */
function request(kind: Kind, text: string, meta: ServerMeta | undefined, given: string): { args: Json; file?: UploadedDocument } {
  const server = meta && { name: meta.name, url: meta.url, ...(meta.description ? { description: meta.description } : {}), ...(meta.version ? { version: meta.version } : {}) };
  switch (kind) {
    case 'agent-card':
      return { args: {}, file: { text, filename: 'agent-card.json', given } };
    case 'toolspec':
      return { args: server ? { mcpServer: server } : {}, file: { text, filename: 'toolspec.json', given } };
    case 'mcp-document': {
      const doc = obj(JSON.parse(text)) ?? {};
      return { args: { mcpServer: doc.mcpServer, toolspec: doc.toolspec } };
    }
  }
}

interface Problem extends Finding {
  severity: 'error' | 'warning';
  /** Where it is in the text; absent for a problem outside it (the server fields). */
  place?: { start: number; end: number };
  /** Extra detail the page found itself (the syntax error's position). */
  note?: string;
}

type Outcome =
  | { state: 'idle' }
  /** `waitUntil`: held until a rate limit's wait is over, then (Date.now() time). */
  | { state: 'busy'; what: 'validate' | 'register'; waitUntil?: number }
  | { state: 'checked'; text: string; kind: Kind; valid: ValidationResult | undefined; error: RegistryError | undefined; problems: Problem[] }
  | { state: 'registered'; text: string; kind: Kind; result: RegistrationResult; problems: Problem[] }
  /** Refused for another reason than the document: its checking (network, limits), or its registration (token, ownership). */
  | { state: 'failed'; what: 'validate' | 'register'; error: unknown };

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset);
  const line = before.split(/\r\n|\n|\r/).length;
  const column = offset - Math.max(before.lastIndexOf('\n'), before.lastIndexOf('\r'));
  return `line ${line}, column ${column}`;
}

/**
 * A bare toolspec is checked as an MCP server's (`{"mcpServer", "toolspec"}`, the server from
 * the fields): the registry's paths into it start with /toolspec, which the pasted document does
 * not have. Said as paths into that document ("/tools/1/inputSchema"); the server's stay /mcpServer.
 */
const inToolspec = (path: string) => (path === '/toolspec' ? '' : path.startsWith('/toolspec/') ? path.slice('/toolspec'.length) : path);

/** The registry's words about a bare toolspec, with its paths into the document as the list shows them ("… is already used by /tools/0"). */
const toolspecWords = (message: string) => message.replace(/(^|[\s("'“])\/toolspec(?=[/\s:.,;)"'”]|$)\/?/g, '$1/');

/**
 * The registry's refusal of a bare toolspec, in its words (toolspecWords): of the toolspec ("The
 * toolspec is not valid (1 error)…", as the CLI's validate says it), not of "The MCP server
 * registration" the person never wrote, unless a server field is at fault too.
 */
const toolspecRefusal = (error: RegistryError): string => {
  const words = toolspecWords(error.message);
  return error.details.some((d) => d.path.startsWith('/mcpServer')) ? words : words.replace(/^The MCP server registration is /, 'The toolspec is ');
};

/** The registry's findings placed in the text (a bare toolspec's as paths into it, see inToolspec). */
function placeProblems(text: string, kind: Kind, errors: Finding[], warnings: Finding[]): Problem[] {
  const parsed = parseDocument(text);
  const toDocument = (path: string): string | undefined => (kind === 'toolspec' && path.startsWith('/mcpServer') ? undefined : path);
  const place = (f: Finding, severity: Problem['severity']): Problem => {
    const problem: Problem = kind === 'toolspec' ? { ...f, path: inToolspec(f.path), message: toolspecWords(f.message), severity } : { ...f, severity };
    // A syntax error: the registry's path is the whole document; mark where the parser stopped.
    if (parsed.syntaxError && (problem.path === '' || problem.path === '/')) {
      problem.place = parsed.syntaxError.range;
      problem.note = `${parsed.syntaxError.message} at ${lineAndColumn(text, parsed.syntaxError.range.start)}`;
      return problem;
    }
    const path = toDocument(problem.path);
    if (path !== undefined) problem.place = locate(parsed, path);
    return problem;
  };
  return [...errors.map((f) => place(f, 'error')).sort(byPlace), ...warnings.map((f) => place(f, 'warning')).sort(byPlace)];
}

/**
 * The order a reader meets problems in: the registry lists them in its schema's order, not the
 * document's (a card with `skills` before `capabilities` had the capabilities' error first, the
 * list jumping up and down the document). Errors stay before warnings (placeProblems), should the
 * registry ever give both (a refusal gives its errors only): they stop a registration, so they are
 * the ones to mend first, and the list's heading counts them first.
 * Problems outside the document (the server fields, below it) come after, in the registry's order.
 */
const byPlace = (a: Problem, b: Problem): number => (a.place && b.place ? a.place.start - b.place.start : a.place ? -1 : b.place ? 1 : 0);

export function ValidatePage({ moved }: { moved: number }) {
  const heading = usePageHeading(`Validate and register · ${config.name}`, moved);
  const [draft] = useState(savedDraft);
  const [text, setText] = useState(draft?.text ?? '');
  const [meta, setMeta] = useState<ServerMeta>(draft?.meta ?? { name: '', url: '', description: '', version: '' });
  // The file the text came from, while it is unchanged: messages name it, not the file part sent.
  const [chosen, setChosen] = useState<{ name: string; text: string } | undefined>(() => (draft?.fileName ? { name: draft.fileName, text: draft.text } : undefined));
  const fileName = chosen?.text === text ? chosen.name : undefined;
  // Saved as the edit renders, not after the next paint (useEffect): a reload or a link followed
  // within that frame found the draft as it was before the edit. The file's name goes with it.
  useLayoutEffect(() => saveDraft(fileName === undefined ? { text, meta } : { text, meta, fileName }), [text, meta, fileName]);
  const [token, setToken] = useState(savedToken());
  const [outcome, setOutcome] = useState<Outcome>({ state: 'idle' });
  const [dragging, setDragging] = useState(false);
  // A file too large to be a document: its name (the person's file's, isolated when shown) and what is wrong.
  const [fileError, setFileError] = useState<{ name: string; why: string }>();
  const kind = useMemo(() => detectKind(text), [text]);
  const resultRef = useRef<HTMLDivElement>(null);
  const refusalRef = useRef<HTMLDivElement>(null);
  const busy = outcome.state === 'busy';
  const metaGiven = meta.name.trim() !== '' || meta.url.trim() !== '';
  const tooLarge = new TextEncoder().encode(text).length > MAX_PASTE_BYTES;
  const refused = outcome.state === 'failed' && outcome.what === 'register' ? outcome : undefined;
  // The document shown is the one the registry refused for errors in it (not only in the server
  // fields below it, which are marked themselves): the box is in error, described by the outcome.
  const documentRefused =
    outcome.state === 'checked' && outcome.error !== undefined && outcome.text === text && outcome.problems.some((p) => p.severity === 'error' && !p.path.startsWith('/mcpServer'));

  /** Sends the document (the text shown, or a file just dropped) to the registry. */
  const run = async (what: 'validate' | 'register', sentText: string = text, sentFile = chosen?.text === sentText ? chosen.name : undefined) => {
    if (!sentText.trim() || new TextEncoder().encode(sentText).length > MAX_PASTE_BYTES) return;
    // Under the wait a refusal named (a rate limit's Retry-After, here or on another view: a
    // validate is a read, a register a write): asked sooner, it is only refused again.
    const wait = rateWaitLeft(what === 'register' ? 'write' : 'read');
    setOutcome(wait > 0 ? { state: 'busy', what, waitUntil: Date.now() + wait } : { state: 'busy', what });
    if (wait > 0) await new Promise((resolve) => window.setTimeout(resolve, wait));
    const sentKind = detectKind(sentText);
    let refusedRegistration = false;
    try {
      const given = sentFile ? `The file “${sentFile}”` : 'The pasted document';
      const { args, file } = request(sentKind, sentText, sentKind === 'toolspec' && (what === 'register' || metaGiven) ? meta : undefined, given);
      if (what === 'validate') {
        const valid = await call<ValidationResult>({ validate: args }, { file, document: { text: sentText, given }, token: token || undefined });
        // The registry took the token (a registry closed to anonymous reads asks for one to
        // validate): kept, as a registration's is, so Search does not ask for it again.
        if (token) saveToken(token);
        setOutcome({ state: 'checked', text: sentText, kind: sentKind, valid, error: undefined, problems: placeProblems(sentText, sentKind, [], valid.warnings) });
      } else {
        const result = await call<RegistrationResult>({ register: args }, { file, document: { text: sentText, given }, token: token || undefined });
        saveToken(token);
        setOutcome({ state: 'registered', text: sentText, kind: sentKind, result, problems: placeProblems(sentText, sentKind, [], result.warnings) });
      }
    } catch (error) {
      if (aboutDocument(error)) {
        if (token) saveToken(token); // refused for the document: the token was taken
        const said = sentKind === 'toolspec' ? new RegistryError(error.code, toolspecRefusal(error), error.details, error.retryAfterSeconds) : error;
        setOutcome({ state: 'checked', text: sentText, kind: sentKind, valid: undefined, error: said, problems: placeProblems(sentText, sentKind, error.details, []) });
      } else {
        refusedRegistration = what === 'register';
        // Kept for the tab unless the registry refused the token itself: Search and the entries
        // send the kept token with every read, and would be refused with it too.
        if (needsToken(error)) {
          if (savedToken() === token) saveToken('');
        } else if (what === 'register') saveToken(token);
        // A token refused, or none typed, is told to the person: the registry's words name the
        // header a program sends and where an operator configures tokens.
        setOutcome({ state: 'failed', what, error: token ? typedTokenRefused(error) : tokenWanted(error) });
      }
    }
    // Focus goes where the answer is: a refused registration is told beside the token field.
    requestAnimationFrame(() => (refusedRegistration ? refusalRef : resultRef).current?.focus());
  };

  const readFile = async (file: File | undefined) => {
    setFileError(undefined);
    if (!file) return;
    if (file.size > MAX_PASTE_BYTES) {
      setFileError({ name: file.name, why: ` is ${Math.round(file.size / 1024)} KB; cards and toolspecs are a few KB (this registry's limit is ${Math.round(config.maxDocumentBytes / 1024)} KB).` });
      return;
    }
    // A file dropped or chosen is there to be checked: validate it at once.
    const content = await file.text();
    setText(content);
    setChosen({ name: file.name, text: content });
    await run('validate', content, file.name);
  };

  return (
    <section class="validate-page">
      <h1 ref={heading} tabIndex={-1}>
        Validate and register
      </h1>
      <p class="lead">
        Paste or drop an A2A agent card (v1.0 or v0.3) or an MCP toolspec. The registry checks it with the same rules as a registration and stores nothing until you register.
      </p>

      <form
        class="validate-form"
        onSubmit={(e) => {
          e.preventDefault();
          void run('validate');
        }}
      >
        <div
          class={`drop-zone${dragging ? ' dragging' : ''}`}
          onDragOver={(e) => {
            e.preventDefault();
            setDragging(true);
          }}
          onDragLeave={() => setDragging(false)}
          onDrop={(e) => {
            e.preventDefault();
            setDragging(false);
            void readFile(e.dataTransfer?.files[0]);
          }}
        >
          <label for="document">Document (JSON)</label>
          <textarea
            id="document"
            rows={16}
            spellcheck={false}
            // JSON typed on a phone: no capital after a full stop.
            autocapitalize="off"
            autoComplete="off"
            value={text}
            // Over the size the page sends, the box is in error: marked so, and described by
            // the alert that says why (heard on the box, not only once as it came). A file
            // refused (dropped here, or chosen) is said on the box too.
            aria-describedby={['document-help', tooLarge && 'document-too-large', fileError && 'document-file-error', documentRefused && 'document-refusal'].filter(Boolean).join(' ')}
            aria-invalid={tooLarge || documentRefused ? 'true' : undefined}
            placeholder='{"name": "…", "supportedInterfaces": [...], …}'
            onInput={(e) => setText(e.currentTarget.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                // As the disabled Validate button: one asking at a time (one waiting for a rate limit too).
                if (!busy) void run('validate');
              }
            }}
          />
          <p id="document-help" class="small muted">
            Drop a .json file here, or{' '}
            <label class="file-label">
              choose a file
              <input
                type="file"
                accept="application/json,.json"
                class="visually-hidden"
                // A file refused (too large) is this control's error.
                aria-describedby={fileError ? 'document-file-error' : undefined}
                aria-invalid={fileError ? 'true' : undefined}
                onChange={(e) => void readFile(e.currentTarget.files?.[0])}
              />
            </label>
            {/* Only into an empty box: over a document typed there, one click lost it for good
                (a value set by the page is no edit Ctrl+Z undoes, and the draft kept follows it). */}
            {text.trim() === '' && (
              <>
                , or{' '}
                <button
                  type="button"
                  class="link"
                  onClick={() => {
                    setText(JSON.stringify(EXAMPLE_CARD, null, 2));
                    // This button goes once the box has text: the focus goes to the example, to edit it.
                    document.getElementById('document')?.focus();
                  }}
                >
                  start from an example card
                </button>
              </>
            )}
            . Ctrl+Enter validates.
          </p>
          {fileError && (
            <p id="document-file-error" class="notice error" role="alert">
              <Foreign text={fileError.name} />
              {fileError.why}
            </p>
          )}
          {tooLarge && (
            <p id="document-too-large" class="notice error" role="alert">
              This is over 1 MB: not an agent card or toolspec.
            </p>
          )}
        </div>
        {text.trim() && (
          <p class="small">
            This looks like <strong>{KIND_TEXT[kind]}</strong>.
          </p>
        )}
        {kind === 'toolspec' && <ServerFields meta={meta} setMeta={setMeta} problems={outcome.state === 'checked' ? outcome.problems : []} />}
        <div class="actions">
          <button type="submit" disabled={busy || !text.trim() || tooLarge}>
            {busy && outcome.what === 'validate' ? 'Validating…' : 'Validate'}
          </button>
        </div>
      </form>

      <div ref={resultRef} tabIndex={-1} class="validation-result">
        {/* Announced: what the check found, in a sentence or two (each part a live region of its
            own: the wait, the refusal, the summary; one around them would say them twice). The
            list of problems and the document are read when the person reaches them: a live
            region around them read the whole document aloud, line numbers and all. */}
        <div class="validation-summary">
          {outcome.state === 'busy' && outcome.what === 'validate' && outcome.waitUntil !== undefined && <WaitSaid what="Validating" until={outcome.waitUntil} />}
          {outcome.state === 'failed' && outcome.what === 'validate' && (
            <ErrorNotice error={outcome.error} title="The registry could not check the document">
              {needsToken(outcome.error) && (
                // A registry closed to anonymous reads (or a token it no longer takes): the token field
                // is down in Register, and the registry's own words speak to programs, not to people.
                // Open to anonymous reads, it refused the token typed under Register, not the want of one.
                <p>
                  {config.readNeedsToken
                    ? 'Type yours under Register ('
                    : 'The token typed under Register is not one this registry knows; it checks documents without a token too. Correct the token or clear it ('}
                  <button type="button" class="link" onClick={() => document.getElementById('token')?.focus()}>
                    go to the token field
                  </button>
                  ), then validate again.
                </p>
              )}
            </ErrorNotice>
          )}
          {(outcome.state === 'checked' || outcome.state === 'registered') && <Summary outcome={outcome} />}
        </div>
        {(outcome.state === 'checked' || outcome.state === 'registered') && <Report outcome={outcome} current={text === outcome.text} />}
      </div>

      <section aria-labelledby="register-h" class="register">
        <h2 id="register-h">Register</h2>
        <p class="small muted">
          Registering needs a token from the registry's operator. It is kept in this tab's session storage only and sent only to this registry.
        </p>
        <form
          class="register-form"
          onSubmit={(e) => {
            e.preventDefault();
            void run('register');
          }}
        >
          <div class="field">
            <label for="token">Registry token</label>
            <input
              id="token"
              type="password"
              autoComplete="off"
              value={token}
              aria-invalid={refused && needsToken(refused.error) ? 'true' : undefined}
              aria-describedby={refused ? 'register-refusal' : undefined}
              onInput={(e) => setToken(e.currentTarget.value)}
            />
          </div>
          <div class="actions">
            <button type="submit" disabled={busy || !text.trim() || !token.trim() || tooLarge}>
              {busy && outcome.what === 'register' ? 'Registering…' : 'Register'}
            </button>
            {token && (
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setToken('');
                  saveToken('');
                  // This button goes with the token: the focus waits in the emptied field (where
                  // another is typed), not lost to the top of the page.
                  document.getElementById('token')?.focus();
                }}
              >
                Forget token
              </button>
            )}
          </div>
        </form>
        {/* The wait and the refusal are each a live region of their own: not one around them (nested, said twice). */}
        <div ref={refusalRef} tabIndex={-1} class="register-result">
          {outcome.state === 'busy' && outcome.what === 'register' && outcome.waitUntil !== undefined && <WaitSaid what="Registering" until={outcome.waitUntil} />}
          {refused && (
            <ErrorNotice
              id="register-refusal"
              error={refused.error}
              title={refused.error instanceof RegistryError && refused.error.code === 'TIMEOUT' ? 'No answer to the registration' : 'The registry did not register the document'}
            >
              {refused.error instanceof RegistryError && refused.error.code === 'TIMEOUT' && (
                // The request may have reached the registry before the answer was lost.
                <p>It may have been registered all the same. Registering it again is safe: a document already registered unchanged changes nothing.</p>
              )}
            </ErrorNotice>
          )}
        </div>
      </section>
    </section>
  );
}

/** An asking held for a rate limit's wait, as the search says it. */
const WaitSaid = ({ what, until }: { what: string; until: number }) => (
  <p class="muted" role="status">
    {what} in <Countdown until={until} />, when the registry allows it.
  </p>
);

function ServerFields({ meta, setMeta, problems }: { meta: ServerMeta; setMeta: (m: ServerMeta) => void; problems: Problem[] }) {
  const field = (key: keyof ServerMeta, label: string, required: boolean, inputMode: 'text' | 'url' = 'text') => {
    const problem = problems.find((p) => p.path === `/mcpServer/${key}` || (key === 'name' && p.path === '/mcpServer'));
    return (
      <div class="field">
        <label for={`mcp-${key}`}>
          {label}
          {required && <span class="required"> (needed to register)</span>}
        </label>
        <input
          id={`mcp-${key}`}
          type="text"
          // A name or description in Arabic or Hebrew is typed right to left (a URL stays left to right).
          dir={inputMode === 'url' ? undefined : 'auto'}
          inputMode={inputMode}
          // A phone keyboard would capitalise a URL's first letter and underline its words.
          {...(inputMode === 'url' ? { autocapitalize: 'off', spellcheck: false } : {})}
          value={meta[key]}
          aria-invalid={problem ? 'true' : undefined}
          aria-describedby={problem ? `mcp-${key}-problem` : undefined}
          onInput={(e) => setMeta({ ...meta, [key]: e.currentTarget.value })}
        />
        {problem && (
          <small id={`mcp-${key}-problem`} class="field-problem">
            <Foreign text={problem.message} />
            {problem.hint && (
              <>
                {' — '}
                <Foreign text={problem.hint} />
              </>
            )}
          </small>
        )}
      </div>
    );
  };
  return (
    <fieldset class="server-fields">
      <legend>The MCP server these tools belong to</legend>
      {field('name', 'Server name', true)}
      {field('url', 'Server URL', true, 'url')}
      {field('description', 'Description', false)}
      {field('version', 'Version', false)}
    </fieldset>
  );
}

/** The outcome in a sentence or two: registered, valid, or not valid and why. */
function Summary({ outcome }: { outcome: Extract<Outcome, { state: 'checked' | 'registered' }> }) {
  const warnings = outcome.problems.filter((p) => p.severity === 'warning');
  let summary;
  if (outcome.state === 'registered') {
    const r = outcome.result;
    summary = (
      <div class="notice ok" role="status">
        <p>
          <strong>{r.created ? 'Registered.' : r.changed ? `Updated to revision ${r.revision}.` : 'Already registered: nothing changed.'}</strong>{' '}
          <a href={href(`/entries/${encodeURIComponent(r.id)}`)}>Open the entry</a> <span class="muted">({r.id}, revision {r.revision})</span>
        </p>
      </div>
    );
  } else if (outcome.valid) {
    const v = outcome.valid;
    // The size the registry gives is the document its limit applies to: of a server and its
    // toolspec, the toolspec's (not what was pasted).
    const what =
      v.kind === 'agent'
        ? `An A2A v${v.protocolVersion ?? '1.0'} agent card, ${v.sizeBytes.toLocaleString()} bytes`
        : outcome.kind === 'mcp-document'
          ? `An MCP server and its ${v.sizeBytes.toLocaleString()}-byte toolspec`
          : `An MCP toolspec, ${v.sizeBytes.toLocaleString()} bytes`;
    summary = (
      <div class="notice ok" role="status">
        <p>
          <strong>Valid.</strong> {what}
          {warnings.length ? `, with ${warnings.length} warning${warnings.length > 1 ? 's' : ''}` : ''}.
        </p>
      </div>
    );
  } else {
    const e = outcome.error!;
    summary = (
      <div id="document-refusal" class="notice error" role="alert">
        <p>
          {/* A URL another principal holds, or the registry's own: the document is valid, and refused. */}
          <strong>{e.code === 'FORBIDDEN' ? 'Refused' : 'Not valid'}</strong> <span class="code">{e.code}</span>
        </p>
        <p>
          <Foreign text={e.message} />
        </p>
      </div>
    );
  }
  return summary;
}

/** Each problem with its path and hint, and the document with the problems marked. */
function Report({ outcome, current }: { outcome: Extract<Outcome, { state: 'checked' | 'registered' }>; current: boolean }) {
  const errors = outcome.problems.filter((p) => p.severity === 'error');
  const warnings = outcome.problems.filter((p) => p.severity === 'warning');
  const placed: Placed[] = outcome.problems.flatMap((p, i) => (p.place ? [{ number: i + 1, severity: p.severity, range: p.place }] : []));
  return (
    <>
      {!current && <p class="small muted">You have edited the document since: validate again to check the changes.</p>}
      {outcome.problems.length > 0 && (
        <>
          <h2>
            {errors.length > 0 && `${errors.length} error${errors.length > 1 ? 's' : ''}`}
            {errors.length > 0 && warnings.length > 0 && ', '}
            {warnings.length > 0 && `${warnings.length} warning${warnings.length > 1 ? 's' : ''}`}
          </h2>
          <ol class="problems">
            {outcome.problems.map((p, i) => {
              const where = p.place ? (
                // Named for its problem (the number its mark in the document carries, and its
                // path): a screen reader's list of links is otherwise the same words again and again.
                <a href={`#${anchorOf(i + 1)}`} aria-label={`Show in the document: problem ${i + 1}, ${clipped(p.path || '/', 80)}`}>
                  Show in the document
                </a>
              ) : (
                p.path.startsWith('/mcpServer') && <span class="muted">In the server fields above.</span>
              );
              // Each piece on its own line after the message, and a space between pieces in the
              // text too (a screen reader's reading, a copy): the message never runs into the next.
              return (
                // Focusable from script only: a mark's link back to its problem (Enter on a mark in
                // the document) moves the focus here, where the next Tab goes on and a screen reader
                // reads the problem, not to the page's body.
                <li class={p.severity} id={`item-${anchorOf(i + 1)}`} tabIndex={-1}>
                  <span class={`badge ${p.severity === 'error' ? 'bad' : 'warn'}`}>{p.severity}</span>{' '}
                  <code class="path">
                    <Foreign text={p.path || '/'} />
                  </code>{' '}
                  {/* The registry's words, quoting the document: isolated, as every message the page shows. */}
                  <span class="message">
                    <Foreign text={p.message} />
                  </span>
                  {p.note && (
                    <span class="note">
                      {' ('}
                      <Foreign text={p.note} />)
                    </span>
                  )}
                  {p.hint && (
                    <>
                      {' '}
                      <p class="hint">
                        <Foreign text={p.hint} />
                      </p>
                    </>
                  )}
                  {where && (
                    <>
                      {' '}
                      <p class="where small">{where}</p>
                    </>
                  )}
                </li>
              );
            })}
          </ol>
        </>
      )}
      {placed.length > 0 && (
        <>
          <h2>Your document</h2>
          <DocumentView text={outcome.text} placed={placed} />
        </>
      )}
    </>
  );
}
