// @ts-check
// The embedded database's upkeep: what PostgreSQL's autovacuum does on a server, which
// PGlite (one process, no background workers) never does. Without it, dead row versions
// stay in every index for good (a thread's GIN entries pile up with each of its runs),
// the planner's statistics are never taken, and transaction IDs are never frozen, so a
// busy database would end up refusing writes to avoid wraparound.
// The same rules and settings as autovacuum decide which table is due (the PostgreSQL
// documentation, "The Autovacuum Daemon"); the thread runs them between statements.

/**
 * The numbers autovacuum reads, per table: the catalogs' and TOAST tables' too, whose
 * unfrozen XIDs hold the database's age back as much as ours do.
 */
const UPKEEP_STATS_SQL = `
  SELECT format('%I.%I', s.schemaname, s.relname) AS name,
         s.n_dead_tup::float8 AS dead, s.n_ins_since_vacuum::float8 AS inserted,
         s.n_mod_since_analyze::float8 AS modified, greatest(c.reltuples, 0)::float8 AS tuples,
         age(c.relfrozenxid)::float8 AS xid_age, greatest(c.relpages, 0)::float8 AS pages,
         greatest(c.relallfrozen, 0)::float8 AS frozen_pages, c.relkind = 't' AS toast
  FROM pg_stat_all_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.schemaname NOT LIKE 'pg\\_temp%' AND s.schemaname NOT LIKE 'pg\\_toast\\_temp%'
  ORDER BY s.schemaname, s.relname`;

/**
 * The cluster's other databases (template0, template1): PGlite's one connection cannot
 * vacuum them, so their unfrozen XIDs only age, and PostgreSQL stops accepting writes
 * when the oldest database nears wraparound, whichever it is.
 */
const OLDEST_OTHER_DATABASE_SQL = `
  SELECT datname AS name, age(datfrozenxid)::float8 AS xid_age FROM pg_database
  WHERE datname <> current_database() ORDER BY age(datfrozenxid) DESC LIMIT 1`;

const UPKEEP_SETTINGS_SQL = `
  SELECT name, setting::float8 AS value FROM pg_settings
  WHERE name IN ('autovacuum_vacuum_threshold', 'autovacuum_vacuum_scale_factor', 'autovacuum_vacuum_max_threshold',
                 'autovacuum_vacuum_insert_threshold', 'autovacuum_vacuum_insert_scale_factor',
                 'autovacuum_analyze_threshold', 'autovacuum_analyze_scale_factor', 'autovacuum_freeze_max_age')`;

/** PostgreSQL's defaults, for a setting the server does not report. */
const DEFAULTS = {
  autovacuum_vacuum_threshold: 50,
  autovacuum_vacuum_scale_factor: 0.2,
  autovacuum_vacuum_max_threshold: 100_000_000,
  autovacuum_vacuum_insert_threshold: 1000,
  autovacuum_vacuum_insert_scale_factor: 0.2,
  autovacuum_analyze_threshold: 50,
  autovacuum_analyze_scale_factor: 0.1,
  autovacuum_freeze_max_age: 200_000_000,
};

/**
 * @typedef {{ name: string; dead: number; inserted: number; modified: number; tuples: number; xid_age: number; pages: number; frozen_pages: number; toast: boolean }} TableStats
 * @typedef {{ sql: string; table: string; why: string }} UpkeepStep
 */

/**
 * The statements due, at most one per table, by autovacuum's rules: VACUUM when the dead
 * rows, the rows inserted since the last vacuum or the age of the table's oldest unfrozen
 * XID pass their thresholds; ANALYZE when the rows changed since the last analyze do;
 * VACUUM (ANALYZE) when both are due.
 * @param {TableStats[]} tables
 * @param {Array<{ name: string; value: number }>} settingRows
 * @returns {UpkeepStep[]}
 */
export function planUpkeep(tables, settingRows) {
  /** @type {Record<string, number>} */
  const s = { ...DEFAULTS };
  for (const { name, value } of settingRows) if (Number.isFinite(value)) s[name] = value;
  // -1 turns the two optional thresholds off (PostgreSQL's convention).
  const deadCap = s.autovacuum_vacuum_max_threshold >= 0 ? s.autovacuum_vacuum_max_threshold : Infinity;
  const insertsCount = s.autovacuum_vacuum_insert_threshold >= 0;
  /** @type {UpkeepStep[]} */
  const steps = [];
  for (const t of tables) {
    const deadLimit = Math.min(s.autovacuum_vacuum_threshold + s.autovacuum_vacuum_scale_factor * t.tuples, deadCap);
    // PostgreSQL 18 scales the inserts' threshold by the part of the table not yet all-frozen.
    const unfrozen = t.pages > 0 && t.frozen_pages > 0 ? 1 - Math.min(t.frozen_pages, t.pages) / t.pages : 1;
    const insertLimit = s.autovacuum_vacuum_insert_threshold + s.autovacuum_vacuum_insert_scale_factor * t.tuples * unfrozen;
    const analyzeLimit = s.autovacuum_analyze_threshold + s.autovacuum_analyze_scale_factor * t.tuples;
    const vacuumWhy =
      t.xid_age > s.autovacuum_freeze_max_age
        ? `transaction IDs ${t.xid_age} old`
        : t.dead > deadLimit
          ? `${t.dead} dead rows`
          : insertsCount && t.inserted > insertLimit
            ? `${t.inserted} rows inserted`
            : undefined;
    // ANALYZE skips a TOAST table (so its count never resets): autovacuum never asks for it.
    const analyzeWhy = !t.toast && t.modified > analyzeLimit ? `${t.modified} rows changed` : undefined;
    const why = [vacuumWhy, analyzeWhy].filter(Boolean).join(", ");
    if (vacuumWhy && analyzeWhy) steps.push({ sql: `VACUUM (ANALYZE) ${t.name}`, table: t.name, why });
    else if (vacuumWhy) steps.push({ sql: `VACUUM ${t.name}`, table: t.name, why });
    else if (analyzeWhy) steps.push({ sql: `ANALYZE ${t.name}`, table: t.name, why });
  }
  return steps;
}

/**
 * Runs the steps due now on `pg`, one statement per table, each taking PGlite's lock on
 * its own so that queries waiting meanwhile run between two tables. A table that fails
 * (dropped since the statistics were read, say) does not stop the others.
 * @param {{ query: (sql: string) => Promise<{ rows: any[] }>; exec: (sql: string) => Promise<unknown> }} pg
 * @returns {Promise<{ done: Array<UpkeepStep & { ms: number }>; failed: Array<UpkeepStep & { error: unknown }>; oldestOther: { name: string; xidAge: number } | undefined }>}
 */
export async function runUpkeep(pg) {
  const [oldest] = (await pg.query(OLDEST_OTHER_DATABASE_SQL)).rows;
  const tables = (await pg.query(UPKEEP_STATS_SQL)).rows;
  const settings = (await pg.query(UPKEEP_SETTINGS_SQL)).rows;
  const done = [];
  const failed = [];
  for (const step of planUpkeep(tables, settings)) {
    const started = performance.now();
    try {
      await pg.exec(step.sql);
      done.push({ ...step, ms: performance.now() - started });
    } catch (error) {
      failed.push({ ...step, error });
    }
  }
  return { done, failed, oldestOther: oldest ? { name: oldest.name, xidAge: oldest.xid_age } : undefined };
}
