/**
 * Storage faults, named. When the database cannot take writes (disk full, read-only, the file
 * deleted or corrupt, the server unreachable) the engines throw StorageUnavailableError with
 * what is wrong, instead of a raw driver error: the service refuses the request with an error
 * that says storage is unavailable, /readyz reports the fault, and a write probe clears it.
 * Anything not recognised here stays a plain error (a bug, reported as one).
 */

export type StorageFaultReason = 'disk-full' | 'read-only' | 'missing' | 'corrupt' | 'io' | 'unreachable' | 'locked' | 'refused';

export interface StorageFault {
  reason: StorageFaultReason;
  /** For operators and clients: what is wrong, in a sentence (no paths, no credentials). */
  message: string;
  /** The engine's own code (SQLITE_FULL, 53100, ECONNREFUSED...), for the logs. */
  code: string;
  /**
   * For the log alone, never a client nor /readyz (both open to anyone): the file system's or the
   * engine's own words, which may name the server's paths (`mkdir '/srv/registry/data'`).
   */
  detail?: string;
  /** ISO-8601: when it was first seen. */
  since: string;
  /**
   * 'rows': one write waited too long for rows another transaction holds (PostgreSQL: an entry
   * being written by another request, or locked by another session). The store takes other
   * writes, so it is no fault of the store (never `current`, /readyz stays ready): only the
   * writes that need those rows are refused.
   *
   * 'connection': the connection one request's statement ran on was lost under it (PostgreSQL:
   * the server ended its session, pg_terminate_backend, a restart or a failover, or the socket
   * closed). It says nothing of the store's state (the next statement opens another connection,
   * and fails as unreachable if none opens), so it is never `current` either; the request is
   * told what happened and whether anything was written (see lostConnection).
   *
   * 'read': one read waited too long for a lock (PostgreSQL: a table another session or a
   * migration holds exclusively, past the statement timeout; SQLite: another process holding the
   * file exclusively). A read waits only for a lock that excludes readers too, and says nothing
   * of whether the store takes writes (the write probe finds that out): never `current` either
   * (see FaultState.wrapRead). Before, it was told as "a write waited longer than the statement
   * timeout" and turned /readyz not ready until the next probe.
   */
  scope?: 'rows' | 'connection' | 'read';
  /**
   * A fault no write probe clears: the database file is damaged (an integrity check found it, or
   * SQLite reported a corrupt page), and writing on into it could only spread the damage. Writes
   * stay refused until the operator repairs the file and restarts the registry.
   */
  lasting?: true;
}

export class StorageUnavailableError extends Error {
  /**
   * What became of this request's write when that is not "nothing was written": the fault was
   * found after its commit (SQLite: the file gone under the connection, or the fsync failed), so
   * the write is in the database the connection has open and may be kept. Said to the client.
   */
  readonly consequence: string | undefined;

  constructor(
    readonly fault: StorageFault,
    options?: { cause?: unknown; consequence?: string },
  ) {
    super(
      fault.scope === 'rows'
        ? `The write waited too long for a lock: ${fault.message}`
        : fault.scope === 'connection'
          ? `The database connection was lost: ${fault.message}`
          : fault.scope === 'read'
            ? `The read waited too long for a lock: ${fault.message}`
            : `Storage is unavailable: ${fault.message}${options?.consequence ? `; ${options.consequence}` : ''}`,
      options,
    );
    this.name = 'StorageUnavailableError';
    this.consequence = options?.consequence;
  }
}

/** A write refused after its commit (see StorageUnavailableError.consequence). */
export const MAY_HAVE_BEEN_STORED =
  'this write was committed to the open database before the fault was found, so it may have been stored or not (it is kept if storage takes writes again before the registry stops): read it back (get) before sending it again';

const MESSAGES: Record<StorageFaultReason, string> = {
  'disk-full': 'the disk holding the database is full',
  'read-only': 'the database is read-only',
  missing: 'the database file is missing (deleted or moved)',
  corrupt: 'the database file is corrupt',
  io: 'the database cannot be written (I/O error)',
  unreachable: 'the database server cannot be reached',
  locked: "the database is locked by another process's write (an import?) for longer than a write waits; try again shortly",
  refused: 'the database server refuses the registry its connections',
};

export function storageFault(reason: StorageFaultReason, code: string, message: string = MESSAGES[reason]): StorageFault {
  return { reason, message, code, since: new Date().toISOString() };
}

const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** better-sqlite3's SqliteError codes (extended result codes, e.g. SQLITE_IOERR_WRITE). */
export function sqliteFault(error: unknown): StorageFault | undefined {
  const code = codeOf(error);
  if (!code?.startsWith('SQLITE_')) return undefined;
  if (code === 'SQLITE_FULL') return storageFault('disk-full', code);
  if (code === 'SQLITE_READONLY_DBMOVED') return storageFault('missing', code);
  if (code.startsWith('SQLITE_READONLY')) return storageFault('read-only', code);
  if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB') return storageFault('corrupt', code);
  if (code.startsWith('SQLITE_CANTOPEN')) return storageFault('missing', code);
  if (code.startsWith('SQLITE_IOERR')) return storageFault('io', code);
  // The write queue waited for another process's lock as long as it may (sqlite/write-queue.ts).
  if (code.startsWith('SQLITE_BUSY')) return storageFault('locked', code);
  return undefined;
}

/** Connection failures node-postgres reports without a SQLSTATE. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const NETWORK_MESSAGES = /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly/i;

/** What the registry's state, not a request, makes PostgreSQL refuse: each said in a sentence (no names, no credentials). */
const POSTGRES_REFUSALS: Record<string, [StorageFaultReason, string]> = {
  // A statement timeout: in a registry's short statements, a lock held past it (another
  // session's or a replica's that stopped mid-transaction), not a query too large.
  '57014': ['locked', 'a write waited longer than the statement timeout, for a lock another session or replica holds; try again shortly'],
  '55P03': ['locked', 'a write could not take a lock another session or replica holds; try again shortly'],
  '53300': ['refused', 'the database server has no connection left for the registry (too many connections, or a connection limit); try again shortly'],
  '53000': ['refused', 'the database server lacks the resources to take the request; try again shortly'],
  '28P01': ['refused', "the database server refuses the registry's credentials (was the password changed?): fix DATABASE_URL"],
  '28000': ['refused', "the database server refuses the registry's login (pg_hba.conf, or a role that may not log in): fix DATABASE_URL or the server's rules"],
};
/**
 * The context PostgreSQL gives a lock wait on a row ("while locking tuple (0,1) in relation
 * "entries"", "while updating tuple ...", "while inserting index tuple ..."): a lock on some
 * rows. A wait for a lock that every write takes (the change log's advisory lock, a table lock)
 * has none, or names the function that took it.
 */
const ROW_WAIT = /^while (?:locking|updating|deleting|inserting index|checking uniqueness of) tuple /m;
const ROWS_HELD = 'the rows it changes were held by another request or database session longer than a write waits (the statement or lock timeout)';
const whereOf = (error: unknown): string => {
  const where = (error as { where?: unknown } | null)?.where;
  return typeof where === 'string' ? where : '';
};
/** A read refused for a lock (FaultState.wrapRead), per engine: what held it, and that writes are not the matter. */
const READ_LOCKED = {
  postgres:
    'a read waited longer than the statement timeout, for a lock another session or replica holds on a table (a migration, a VACUUM FULL, a LOCK TABLE); the read changed nothing: try again shortly',
  sqlite: 'a read found the database file locked by another process (holding it exclusively); the read changed nothing: try again shortly',
};
/** node-postgres's own words when the server asks for a password the URL does not give (SCRAM, or MD5 with none). */
const MISSING_PASSWORD = /client password must be a string|SASL: SCRAM-SERVER-FIRST-MESSAGE/i;
/** What that means, and what to fix (the driver's words say neither). */
const NO_PASSWORD =
  'the database server asks for a password and the registry has none: give it in DATABASE_URL (postgres://user:password@host/database, or DATABASE_URL_FILE to keep it out of the environment)';

/** node-postgres errors: SQLSTATE codes (class 08, 25006, 28xxx, 53xxx, 55P03, 57014, 57P0x, 58030, XX00x) and socket errors. */
export function postgresFault(error: unknown): StorageFault | undefined {
  const code = codeOf(error);
  if (code === '53100') return storageFault('disk-full', code);
  if (code === '25006') return storageFault('read-only', code);
  if (code === '58030') return storageFault('io', code);
  if (code === 'XX001' || code === 'XX002') return storageFault('corrupt', code);
  if ((code === '57014' || code === '55P03') && ROW_WAIT.test(whereOf(error))) {
    return { ...storageFault('locked', code, ROWS_HELD), scope: 'rows' };
  }
  const refusal = code === undefined ? undefined : POSTGRES_REFUSALS[code];
  if (refusal) return storageFault(refusal[0], code!, refusal[1]);
  if (code !== undefined && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || NETWORK_CODES.has(code))) {
    return storageFault('unreachable', code);
  }
  const message = error instanceof Error ? error.message : '';
  if (NETWORK_MESSAGES.test(message)) return storageFault('unreachable', 'CONNECTION');
  if (code === undefined && MISSING_PASSWORD.test(message)) return storageFault('refused', 'PASSWORD', NO_PASSWORD);
  return undefined;
}

/**
 * The fault of a statement whose open connection was lost under it (postgresFault's
 * 'unreachable', which on a connection already open can only mean that), scoped to its request;
 * `consequence` says what became of its work (rolled back, or unknown when it was committing).
 * Undefined for any other failure. Before, such a failure was told as "the database server
 * cannot be reached" (it had been reached, and another connection could be) and turned /readyz
 * not ready until the next write.
 */
export function lostConnection(error: unknown, consequence: string): StorageFault | undefined {
  const fault = postgresFault(error);
  if (fault?.reason !== 'unreachable') return undefined;
  return {
    ...storageFault(
      'unreachable',
      fault.code,
      `the database server closed the connection this request ran on (${fault.code}: its session was ended, by an administrator, a restart or a failover, or the network dropped it); ${consequence}`,
    ),
    scope: 'connection',
  };
}

/**
 * What to fix when PostgreSQL refused the registry's login (credentials, pg_hba.conf, no
 * password given), or undefined: said after the driver's own words at start-up, which name
 * neither the setting nor the cause ("SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be
 * a string" for a URL without the password the server asks for).
 */
export function loginRefusal(error: unknown): string | undefined {
  const fault = postgresFault(error);
  return fault?.reason === 'refused' && ['28P01', '28000', 'PASSWORD'].includes(fault.code) ? fault.message : undefined;
}

/**
 * Whether a PostgreSQL store that failed to open may open if tried again: the server not there
 * (yet), starting up, or with no connection left. Refused credentials, a database that does not
 * exist, a bad URL stay failures: waiting changes nothing.
 */
export function retryableAtOpen(error: unknown): boolean {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  const fault = postgresFault(cause);
  return fault?.reason === 'unreachable' || fault?.code === '53300' || fault?.code === '53000';
}

/**
 * Where a store keeps its current fault: set by a write that failed for a storage reason,
 * cleared by the next write that succeeds (or a probe).
 */
export class FaultState {
  #fault: StorageFault | undefined;

  constructor(private readonly classify: (error: unknown) => StorageFault | undefined) {}

  get current(): StorageFault | undefined {
    return this.#fault;
  }

  /** A StorageUnavailableError for a storage fault (remembered); any other error unchanged. */
  wrap(error: unknown): unknown {
    if (error instanceof StorageUnavailableError) {
      if (error.fault.scope === undefined) this.#fault ??= error.fault;
      return error;
    }
    const fault = this.classify(error);
    if (!fault) return error;
    // Some rows held elsewhere: this write's refusal, not the store's state.
    if (fault.scope !== undefined) return new StorageUnavailableError(fault, { cause: error });
    // Keep the first sighting's time while the same fault goes on.
    if (this.#fault?.reason !== fault.reason) this.#fault = fault;
    return new StorageUnavailableError(this.#fault, { cause: error });
  }

  /**
   * As wrap, for a statement that only reads: a lock it waited for too long (reason 'locked') is
   * that read's refusal (scope 'read'), not the store's state. The store's 'locked' fault means
   * writes wait out their limit on a lock every write needs, which a read cannot tell: it is
   * neither recorded (/readyz stays ready, no write probe needed) nor worded as a write's.
   */
  wrapRead(error: unknown): unknown {
    const fault = error instanceof StorageUnavailableError ? undefined : this.classify(error);
    if (fault?.reason !== 'locked') return this.wrap(error);
    const message = fault.code.startsWith('SQLITE_') ? READ_LOCKED.sqlite : READ_LOCKED.postgres;
    return new StorageUnavailableError({ ...fault, message, scope: 'read' }, { cause: error });
  }

  /** Records a fault found without an error (e.g. the file vanished); returns the error to throw. */
  record(fault: StorageFault): StorageUnavailableError {
    // The same fault seen again keeps its first sighting's time, but says what is now known: a
    // background checkpoint's "the database file is missing" is followed by the write's own
    // finding, "deleted and cannot be re-created: <why, and what to do>", which /readyz must say.
    // A sighting that knows less does not undo that: a background checkpoint failing on the
    // deleted file (SQLITE_READONLY_DBMOVED, "the database file is missing") after the write found
    // why it cannot be re-created leaves /readyz saying why and what to do.
    const current = this.#fault;
    const next =
      current?.reason !== fault.reason ? fault : current.detail !== undefined && fault.detail === undefined ? current : { ...fault, since: current.since };
    this.#fault = next;
    return new StorageUnavailableError(next);
  }

  clear(): void {
    this.#fault = undefined;
  }
}
