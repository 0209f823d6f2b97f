import GRDB

/// The journal's tables, created and upgraded by numbered migrations.
///
/// Paths are the plan's dotted step paths (`2.1`, `3.f1`), stable for the same workflow
/// content and arguments: what `resume` and `undo` match steps by.
///
/// Tables keyed by (run, path) are `WITHOUT ROWID`: one B-tree instead of a table plus an
/// index, so each transition's commit writes fewer pages.
enum JournalSchema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
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
                    total_steps INTEGER NOT NULL DEFAULT 0
                );
                CREATE INDEX runs_started ON runs(started_at);
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
                    completed_seq INTEGER,            -- order of reaching `succeeded`
                    PRIMARY KEY (run_id, path)
                ) WITHOUT ROWID;
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
                CREATE TABLE outputs (
                    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                    path TEXT NOT NULL,
                    key TEXT NOT NULL,
                    value TEXT NOT NULL,
                    PRIMARY KEY (run_id, path, key)
                ) WITHOUT ROWID;
                CREATE TABLE output_lines (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                    path TEXT NOT NULL,
                    stream TEXT NOT NULL,             -- stdout | stderr
                    time REAL NOT NULL,
                    line BLOB NOT NULL                 -- one or more consecutive lines, newline-separated
                );
                CREATE INDEX output_lines_run ON output_lines(run_id, id);
                """)
        }
        return migrator
    }
}
