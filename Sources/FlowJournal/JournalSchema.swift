/// The journal's tables, created and upgraded by numbered migrations.
///
/// Paths are the plan's dotted step paths (`2.1`, `3.f1`), stable for the same workflow
/// content and arguments: what `resume` and `undo` match steps by.
///
/// Tables keyed by (run, path) are `WITHOUT ROWID`: one B-tree instead of a table plus an
/// index, so each transition's commit writes fewer pages.
enum JournalSchema {
    /// `runs`: as v1 made it, or with v4's columns (and v6's, given `v4`).
    static func runs(v4: Bool = true) -> String {
        let pathBytes = v4 ? ",\n    workflow_path_bytes BLOB,\n    cwd_bytes BLOB,\n    instance_outputs INTEGER          -- 1: outputs kept per instance (v6)" : ""
        return """
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,               -- run | resume | undo
        parent_id TEXT,                   -- the run resumed or undone
        workflow_path TEXT NOT NULL,
        workflow_name TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        content BLOB NOT NULL,            -- the workflow as it ran, for resume and undo
        args TEXT NOT NULL,               -- JSON: action, vars, with, tags, skip_tags, only
        cwd TEXT NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL,
        state TEXT NOT NULL,              -- running | succeeded | failed | cancelled
        exit_status INTEGER,
        pid INTEGER NOT NULL,
        host TEXT NOT NULL,
        total_steps INTEGER NOT NULL DEFAULT 0\(pathBytes)
    );
    CREATE INDEX runs_started ON runs(started_at);
    """
    }

    /// `steps`: as v1 made it, or with v5's column.
    static func steps(v5: Bool = true) -> String {
        let allowed = v5 ? "\n    allowed_failure INTEGER,          -- 1: its `failed`/`timed_out` did not fail the run" : ""
        return """
    CREATE TABLE steps (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        position INTEGER NOT NULL,        -- pre-order position in the plan
        depth INTEGER NOT NULL,
        name TEXT,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        exit_code INTEGER,
        started_at REAL,
        ended_at REAL,
        completed_seq INTEGER,            -- order of reaching `succeeded`\(allowed)
        PRIMARY KEY (run_id, path)
    ) WITHOUT ROWID;
    """
    }

    static let attempts = """
    CREATE TABLE attempts (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        number INTEGER NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL,
        state TEXT NOT NULL,
        exit_code INTEGER,
        signal INTEGER,
        PRIMARY KEY (run_id, path, number)
    ) WITHOUT ROWID;
    """

    /// `outputs`, named `name`: as v1 made it (one set per step), or as v6 makes it (one set
    /// per instance that succeeded: `seq` is the `→ succeeded` transition's; 0 on rows from
    /// before v6, and on those an older flow writes, which leaves the column alone).
    static func outputs(_ name: String = "outputs", v6: Bool = true) -> String {
        let seq = v6 ? "\n    seq INTEGER NOT NULL DEFAULT 0,     -- the `→ succeeded` transition that wrote it (0: before v6)" : ""
        return """
    CREATE TABLE \(name) (
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        path TEXT NOT NULL,\(seq)
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run_id, path, \(v6 ? "seq, " : "")key)
    ) WITHOUT ROWID;
    """
    }

    /// `transitions` since v2, named `name`: as v2 made it, or with v5's column.
    static func transitions(_ name: String, v5: Bool = true) -> String {
        let allowed = v5 ? "\n        allowed_failure INTEGER,      -- 1 on a `failed`/`timed_out` that did not fail the run" : ""
        return """
        CREATE TABLE \(name) (
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,             -- 1, 2, … in the order they happened
            path TEXT NOT NULL,
            from_state TEXT NOT NULL,
            to_state TEXT NOT NULL,
            attempt INTEGER NOT NULL,
            time REAL NOT NULL,
            reason TEXT,
            exit_code INTEGER,
            signal INTEGER,\(allowed)
            PRIMARY KEY (run_id, seq)
        ) WITHOUT ROWID;
        """
    }

    /// `output_lines` (without its index), named `name`: as v2 made it, or with v3's columns.
    /// `line` holds consecutive lines of one step and stream, each ending in a newline; since
    /// v3 it is empty and `file_offset`/`file_length` say where they are in
    /// `output/<run_id>.log`.
    static func outputLines(_ name: String, v3: Bool = true) -> String {
        let fileColumns = v3 ? ",\n    file_offset INTEGER,\n    file_length INTEGER" : ""
        return """
            CREATE TABLE \(name) (
                id INTEGER PRIMARY KEY,
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                path TEXT NOT NULL,
                stream TEXT NOT NULL,             -- stdout | stderr
                time REAL NOT NULL,
                line BLOB NOT NULL\(fileColumns)
            );
            """
    }

    /// The migrations, in order: each identifier and its SQL.
    static let migrations: [(identifier: String, sql: String)] = [
        ("v1", runs(v4: false) + steps(v5: false) + attempts + outputs(v6: false) + """
            CREATE TABLE transitions (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                path TEXT NOT NULL,
                from_state TEXT NOT NULL,
                to_state TEXT NOT NULL,
                attempt INTEGER NOT NULL,
                time REAL NOT NULL,
                reason TEXT
            );
            CREATE TABLE output_lines (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                path TEXT NOT NULL,
                stream TEXT NOT NULL,             -- stdout | stderr
                time REAL NOT NULL,
                line BLOB NOT NULL                 -- one or more consecutive lines, newline-separated
            );
            CREATE INDEX output_lines_run ON output_lines(run_id, id);
            """),
        // The hot path records transitions only (see `StepLedger`): keyed by run and order,
        // so a run's rows are one range of one B-tree (a commit writes one page, a killed run
        // is replayed without a scan), and carrying the exit code and signal; `steps` and
        // `attempts` are filled in from them by each commit (a live or killed run's step
        // states are worked out from the transitions; see `Journal.steps`). output_lines loses v1's
        // AUTOINCREMENT, which made every insert also update `sqlite_sequence`; its row ids
        // stay increasing without it (rows are only ever deleted a whole old run at a time,
        // never the newest).
        ("v2", transitions("transitions_v2", v5: false) + outputLines("output_lines_v2", v3: false) + """
            INSERT INTO transitions_v2 (run_id, seq, path, from_state, to_state, attempt, time, reason)
                SELECT run_id, id, path, from_state, to_state, attempt, time, reason FROM transitions;
            DROP TABLE transitions;
            ALTER TABLE transitions_v2 RENAME TO transitions;
            INSERT INTO output_lines_v2 SELECT * FROM output_lines;
            DROP TABLE output_lines;
            ALTER TABLE output_lines_v2 RENAME TO output_lines;
            CREATE INDEX output_lines_run ON output_lines(run_id, id);
            """),
        // Output moves out of the database into one append-only file per run: storing 200 MB
        // of output as blobs wrote every page twice (log, then checkpoint) with two system
        // calls per 4 KiB page, four times the time of the run that printed it. Rows keep the
        // step, stream and time, and point into the file; older rows keep their bytes in
        // `line`.
        ("v3", """
            ALTER TABLE output_lines ADD COLUMN file_offset INTEGER;
            ALTER TABLE output_lines ADD COLUMN file_length INTEGER;
            """),
        // A file or directory name need not be UTF-8: `workflow_path` and `cwd` hold how it
        // is shown (`caf\xFF.yaml`), which opens nothing, so the bytes are kept beside them
        // for `resume` and `undo` to reopen the file and enter the directory. NULL when the
        // name is UTF-8 (the text is then the name).
        ("v4", """
            ALTER TABLE runs ADD COLUMN workflow_path_bytes BLOB;
            ALTER TABLE runs ADD COLUMN cwd_bytes BLOB;
            """),
        // Whether a step's failure was allowed (`continue_on_error`): `flow runs` and `flow
        // show` counted it as any failure while the live summary said `1 failed (allowed)`.
        // On the transition (what a killed run is replayed from) and on the step (what a
        // finished run is counted from); 1 or NULL, so that a run without such steps writes
        // nothing more, and rows from before it read as not allowed, as they were shown.
        ("v5", """
            ALTER TABLE transitions ADD COLUMN allowed_failure INTEGER;
            ALTER TABLE steps ADD COLUMN allowed_failure INTEGER;
            """),
        // Outputs per instance: a retried group runs its steps again, and each instance that
        // succeeded is reversed by the rollback with its own outputs; keyed by path and key,
        // each attempt's overwrote the one before, so `flow undo` could reverse only the
        // latest. Keyed by the seq of the instance's `→ succeeded` too (rows from before
        // get 0: the step's latest outputs, as they were). `runs.instance_outputs` is 1 on
        // runs recorded so (NULL on older ones, and on those an older flow records): `flow
        // undo` reverses their every instance; the others one result per step, as before.
        ("v6", outputs("outputs_v6") + """
            INSERT INTO outputs_v6 (run_id, path, seq, key, value) SELECT run_id, path, 0, key, value FROM outputs;
            DROP TABLE outputs;
            ALTER TABLE outputs_v6 RENAME TO outputs;
            ALTER TABLE runs ADD COLUMN instance_outputs INTEGER;
            """),
        // Named after what it does, not numbered: it only adds an index, so it may come
        // before or after any other migration (`IF NOT EXISTS`: a journal given it twice,
        // or made with it, is left as it is).
        ("runs_parent_index", runsParentIndex),
        // Named after what it makes, as the index before it: it depends only on v5's
        // `allowed_failure`. Counts every run finished so far, once.
        ("run_counts", runCounts + countFinishedRuns),
        // An index only, as `runs_parent_index`.
        ("runs_listing_index", runsListingIndex),
        // `run_counts` was first filled by a trigger, which every open parsed (see
        // `runCounts`): a journal given it loses it; the recorder stores the counts.
        ("run_counts_at_run_end", "DROP TRIGGER IF EXISTS run_counts_at_end;\n"),
    ]

    /// What `flow runs` shows of each run, in the order it lists them: the listing reads
    /// this index alone (`Journal.forEachRun` with `listing`). A run's row is ~6 KB with its
    /// workflow's `content`, and the columns after it (`args`, `state`, `ended_at`…) are
    /// read by following the row's overflow pages: listing 50,000 runs read 300 MB of
    /// pages, half of its time, where the index holds ~125 bytes a run. Written twice a run
    /// (its start and its end), never per step.
    static let runsListingIndex = """
        CREATE INDEX IF NOT EXISTS runs_listing ON runs(started_at, id, kind, parent_id, workflow_path, workflow_name, args,
                                                       ended_at, state, exit_status);

        """

    /// The step counts of every finished run, one row a run: what `flow runs` shows in
    /// STEPS. Counting them at each listing read every step of the journal (50,000 runs:
    /// 5.5 M rows, seconds, whatever the rest of the listing cost). A run's `steps` rows
    /// do not change once it has ended (its last transaction writes them, then its end),
    /// so its counts are taken then, in that transaction: the summary's, which are those of
    /// its steps (`countedStep`), or, for a run a second signal abandons, `storeRunCounts`;
    /// the recorder's hot path (a commit per step) is untouched. A finished run without a row (one a flow
    /// from before the table recorded, or rows written by another tool) is counted from its
    /// steps when read, as before (`Journal.fillCounts`).
    ///
    /// Not a trigger, as it first was: every `flow` that opens the journal parses its
    /// schema, and the trigger's SQL, parsed there and compiled into the run's last
    /// `UPDATE`, made a one-step run 20 % more instructions (3.25 → 3.91 M; start-up
    /// 1.14× in paired rounds); the same SQL as a statement at each run's end still cost
    /// 0.27 M. Migration `run_counts_at_run_end` drops the trigger.
    ///
    /// `counts` and `allowed` are `state n` pairs joined by `,` (`succeeded 100,failed 1`;
    /// empty when none), made with SQLite's core functions only.
    static let runCounts = """
        CREATE TABLE IF NOT EXISTS run_counts (
            run_id TEXT PRIMARY KEY,
            counts TEXT NOT NULL,             -- the counted steps per state: `succeeded 100,failed 1`
            allowed TEXT NOT NULL             -- of those, the allowed failures (`continue_on_error`)
        ) WITHOUT ROWID;

        """

    /// Stores the counts of run `?1` (`runCounts`), in the transaction that records its end
    /// (a run a second signal abandons; a run's own end stores the summary's counts).
    static let storeRunCounts = """
        WITH \(undoneGroups("run_id = ?1 AND")), \(countedSteps("run_id = ?1 AND", allowed: "allowed_failure"))
        INSERT OR REPLACE INTO run_counts (run_id, counts, allowed)
        SELECT ?1, COALESCE(group_concat(counted || ' ' || n, ','), ''),
               COALESCE(group_concat(CASE WHEN allowed > 0 THEN counted || ' ' || allowed END, ','), '')
        FROM (SELECT counted, COUNT(*) AS n, COUNT(allowed_failure) AS allowed FROM counted_steps GROUP BY counted)
        """

    /// The groups whose `undo` ran (`undone`), of the runs `filter` (SQL ending in `AND`, or
    /// empty) selects, as the common table `undone_groups(run_id, path)` that `countedState`
    /// reads: taken once (a run has few or none), not looked for per step.
    static func undoneGroups(_ filter: String) -> String {
        """
        undone_groups AS MATERIALIZED (
            SELECT run_id, path FROM steps WHERE \(filter) state = 'undone' AND kind NOT IN ('print', 'delay', 'shell')
                AND path NOT LIKE '%u%')
        """
    }

    /// The rows of `steps` the counts count (`countedStep`) of the runs `filter` (as for
    /// `undoneGroups`) selects, as the common table `counted_steps(run_id, counted,
    /// allowed_failure)`, `counted` being `countedState` and `allowed_failure` the column
    /// `allowed` names (`NULL` for a journal without it). Materialized, so that
    /// `countedState` is evaluated once per row: grouped by it in the same `SELECT`, SQLite
    /// evaluated it a second time, that copy scanning all of `undone_groups` for each
    /// succeeded leaf (no index): quadratic, 5 s for a journal of 18,000 runs with 12,000
    /// undone groups, 0.08 s before the groups were looked for.
    static func countedSteps(_ filter: String, allowed: String) -> String {
        """
        counted_steps AS MATERIALIZED (
            SELECT s.run_id AS run_id, \(countedState) AS counted, \(allowed) AS allowed_failure FROM steps s
            WHERE \(filter) \(countedStep))
        """
    }

    /// The state a counted row `s` of `steps` is counted in (`countedStep`): its own, but
    /// `undone` for a leaf that succeeded inside a group whose `undo` ran, which reversed it,
    /// as the summary counts it (`RunState.recount`; `Journal.countedState` for a run still
    /// recorded live). Needs `undoneGroups` in the statement's `WITH`.
    static let countedState = """
        CASE WHEN s.state = 'succeeded' AND s.kind IN ('print', 'delay', 'shell') AND EXISTS (
                SELECT 1 FROM undone_groups g WHERE g.run_id = s.run_id AND s.path > g.path || '.' AND s.path < g.path || '/')
            THEN 'undone' ELSE s.state END
        """

    /// `run_counts` for the runs finished before it existed (a run still recorded `running`
    /// is counted at its end, or, dead, from its transitions).
    static let countFinishedRuns = """
        WITH \(undoneGroups("")), \(countedSteps("", allowed: "allowed_failure"))
        INSERT OR REPLACE INTO run_counts (run_id, counts, allowed)
        SELECT run_id, group_concat(counted || ' ' || n, ','),
               COALESCE(group_concat(CASE WHEN allowed > 0 THEN counted || ' ' || allowed END, ','), '')
        FROM (SELECT run_id, counted, COUNT(*) AS n, COUNT(allowed_failure) AS allowed FROM counted_steps
              GROUP BY run_id, counted)
        GROUP BY run_id;
        INSERT OR IGNORE INTO run_counts (run_id, counts, allowed) SELECT id, '', '' FROM runs WHERE state <> 'running';
        DELETE FROM run_counts WHERE run_id IN (SELECT id FROM runs WHERE state = 'running');

        """

    /// Whether a row `s` of `steps` is one a run's summary counts (`RunState.counts`): a
    /// leaf, a group its own timeout ended, once (its steps are only `cancelled`), a group
    /// that failed with nothing inside it having run (a `use` given a value not `allowed`:
    /// without it, `runs` and `show` named no failure for the failed run), and a group
    /// whose `undo` failed (a rollback left incomplete). A path's descendants are the paths
    /// between `PATH.` and `PATH/` ('/' follows '.'), an index range. Undo steps aside, and
    /// the steps an undo run left alone (its only skips: `not undone by this run`), which
    /// its summary does not count (`Executor`'s undo). `Journal.isCountedAlone` is the same
    /// rule for a run still recorded live (`fillCounts` leaves an undo's skips out).
    static let countedStep = """
        (kind IN ('print', 'delay', 'shell') OR state IN ('timed_out', 'undo_failed')
            OR (state = 'failed' AND NOT EXISTS (SELECT 1 FROM steps c WHERE c.run_id = s.run_id
                AND c.path > s.path || '.' AND c.path < s.path || '/' AND c.state NOT IN ('skipped', 'pending'))))
        AND path NOT LIKE '%u%'
        AND NOT (state = 'skipped' AND EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id AND r.kind = 'undo'))
        """

    /// The runs that carried a run on (its resumes and undos), found by `parent_id`: `resume`
    /// and `undo` look them up for the run they act on, and `undo` for each run a resume
    /// carried on. Without it each lookup read every run of the journal (50,000 runs: a
    /// scan of the whole `runs` table). Partial: most runs have no parent, and `parent_id =
    /// ?` implies the `IS NOT NULL` that lets SQLite use it.
    static let runsParentIndex = "CREATE INDEX IF NOT EXISTS runs_parent ON runs(parent_id) WHERE parent_id IS NOT NULL;\n"

    /// Every migration's identifier.
    static var identifiers: [String] { migrations.map(\.identifier) }

    /// The table recording which migrations a journal has had. Its name is GRDB's, whose
    /// migrator made journals before flow had its own: those journals carry on from it.
    static let migrationsTable = "CREATE TABLE IF NOT EXISTS grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY)"

    /// The identifiers of the migrations `db` has had.
    static func appliedMigrations(_ db: SQLiteConnection) throws(SQLiteError) -> Set<String> {
        let exists: Int? = try db.value("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'grdb_migrations'")
        guard exists != nil else { return [] }
        return Set(try db.values("SELECT identifier FROM grdb_migrations"))
    }

    /// Whether `db` has the tables and every migration: nothing to make or migrate.
    static func isCurrent(_ db: SQLiteConnection) throws(SQLiteError) -> Bool {
        let tables: Int? = try db.value("SELECT COUNT(*) FROM sqlite_master")
        guard tables ?? 0 > 0 else { return false }
        return try appliedMigrations(db).isSuperset(of: identifiers)
    }

    /// Whether a database that has tables is a flow journal: one that has had a flow
    /// migration. Every flow journal has, from its first transaction on (creating it and
    /// each migration record themselves in the same transaction as their tables).
    static func isJournal(_ db: SQLiteConnection) throws(SQLiteError) -> Bool {
        let tables: Int? = try db.value("SELECT COUNT(*) FROM sqlite_master")
        guard tables ?? 0 > 0 else { return true }
        return try !appliedMigrations(db).isDisjoint(with: identifiers)
    }

    /// Applies the migrations `db` lacks, in order, each in its own transaction (up to and
    /// including `last`, if given).
    ///
    /// Whether a migration is still lacking is read again inside its transaction, which
    /// holds the write lock: read before it, two `flow`s opening an older journal at once
    /// (`runs` beside `runs`, or beside a `flow run`: only creating takes `journal.lock`)
    /// both saw v4 lacking, and the second to get the lock ran it again and failed with
    /// SQLite's `duplicate column name: workflow_path_bytes` (exit 2; found by reading, 4
    /// in 40 rounds of three `flow runs` at once).
    static func migrate(_ db: SQLiteConnection, upTo last: String? = nil) throws {
        let applied = try appliedMigrations(db)
        let count = last.flatMap { last in migrations.firstIndex { $0.identifier == last } }.map { $0 + 1 } ?? migrations.count
        for migration in migrations.prefix(count) where !applied.contains(migration.identifier) {
            try db.transaction {
                guard try !appliedMigrations(db).contains(migration.identifier) else { return }
                try db.execute(migrationsTable)
                try db.execute(migration.sql)
                try db.execute("INSERT INTO grdb_migrations (identifier) VALUES (?)", [migration.identifier])
            }
        }
    }

    /// A new journal gets the latest schema in one transaction, marked as migrated (see
    /// `migrationsTable`): the same tables as v1 then
    /// v2 give, in a third of the time (table rebuilds and renames are what a first `flow
    /// run` in a fresh checkout, as in CI, would otherwise pay for). Returns false, doing
    /// nothing, when the database already has tables.
    static func createLatestIfEmpty(_ db: SQLiteConnection) throws(SQLiteError) -> Bool {
        let tables: Int? = try db.value("SELECT COUNT(*) FROM sqlite_master")
        guard tables == 0 else { return false }
        try db.execute(runs() + steps() + attempts + outputs() + transitions("transitions") + outputLines("output_lines") + """
            CREATE INDEX output_lines_run ON output_lines(run_id, id);
            """ + runsParentIndex + runCounts + runsListingIndex + migrationsTable)
        for identifier in identifiers {
            try db.execute("INSERT INTO grdb_migrations (identifier) VALUES (?)", [identifier])
        }
        return true
    }
}
