/**
 * `a2a-registry import` into a damaged SQLite file (a page in the middle overwritten, a torn
 * index page): an import is a bulk write, and it was stopped only if one of its statements
 * happened to land on a bad page, after it had written others into the file. The target is
 * checked first with SQLite's `quick_check` (`a2a-registry check --quick`'s code, on a read-only
 * connection: a registry running beside it goes on writing), and a damaged file is refused,
 * named as the registry names it, before anything is written; one the registry recorded damaged
 * (registry.db.damaged) is refused without the check.
 *
 * It reads the whole file: 0.3–0.7 s at 10,000 entries, about 2 s per 100,000 (docs/scaling.md),
 * small beside importing into a store that size. In this process, not a child's: the import has
 * nothing else to do meanwhile, and a child's start would cost as much as the check at 10,000.
 */
import fs from 'node:fs';
import { whyNotTheRegistryDatabase } from '../storage/sqlite/database-file.js';
import { damageRecordFile, readDamageRecord } from '../storage/sqlite/damage-record.js';
import { checkIntegrity, damageRemedy, describeDamage, type IntegrityReport } from '../storage/sqlite/integrity.js';

/** The file is no SQLite database at all: said as `a2a-registry check` says it. */
class NotTheRegistryDatabase extends Error {}

/** Throws, naming the file, what SQLite found and what to do, when `databaseFile` is damaged. */
export function refuseDamagedDatabase(databaseFile: string): void {
  // No file, or an empty one (a new data directory): nothing to check, the import creates it.
  if (!(fs.statSync(databaseFile, { throwIfNoEntry: false })?.size ?? 0)) return;
  // Found damaged already (the registry's record beside it): refused at once, as a registry
  // restarted on it refuses its writes, without reading the whole file again to find what the
  // record says. A stale record (the file replaced since) is the store's to remove and say, at its open.
  const recalled = readDamageRecord(databaseFile);
  if (recalled.state === 'damaged') {
    const { foundAt, message } = recalled.record;
    throw new Error(
      `the database file ${databaseFile} was found damaged at ${foundAt} (${damageRecordFile(databaseFile)} says: ${message}). Nothing was written into it. ` +
        `${damageRemedy(databaseFile)}. The restore moves ${damageRecordFile(databaseFile)} aside with the file`,
    );
  }
  // No SQLite database at all (a text file, its header overwritten): said as `a2a-registry check`
  // says it. quick_check called it damaged (SQLITE_NOTADB) and told to check the disk. A folder
  // is left to opening the store, in its words.
  let report: IntegrityReport;
  try {
    const notADatabase = whyNotTheRegistryDatabase(databaseFile);
    if (notADatabase && !notADatabase.folder) throw new NotTheRegistryDatabase(notADatabase.message);
    report = checkIntegrity(databaseFile, 'quick_check');
  } catch (err) {
    if (err instanceof NotTheRegistryDatabase) throw err;
    // Not damage (no permission, a folder): opening the store says what is wrong, in its words.
    return;
  }
  if (report.ok) return;
  throw new Error(`${describeDamage(report)}. Nothing was written into it. ${damageRemedy(databaseFile)}.`);
}
