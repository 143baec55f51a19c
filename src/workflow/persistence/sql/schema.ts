/**
 * The workflow store's schema as one ordered list of versioned migrations, for both backends:
 * a version means the same change on SQLite and on PostgreSQL, and where their SQL differs
 * (column types, STRICT and WITHOUT ROWID tables, byte-order collation, the cluster's tables)
 * the entry holds each backend's text side by side. `migrate.ts` applies them. Migrations are
 * append-only: a released one is never edited.
 */

export interface SchemaMigration {
  readonly version: number;
  readonly name: string;
  /** One text for both backends, or each backend's own. */
  readonly sql: string | { readonly sqlite: string; readonly postgres: string };
}

export const SCHEMA: readonly SchemaMigration[] = [
  {
    version: 1,
    name: "namespaces",
    // On PostgreSQL, COLLATE "C": names order by bytes, as on SQLite, whatever the locale.
    sql: {
      sqlite: `
      CREATE TABLE namespaces (
        name TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        max_in_flight_activities INTEGER
      ) STRICT;
    `,
      postgres: `
      CREATE TABLE namespaces (
        name TEXT COLLATE "C" PRIMARY KEY,
        created_at BIGINT NOT NULL,
        created_by TEXT NOT NULL,
        max_in_flight_activities INTEGER
      );
    `,
    },
  },
  {
    version: 2,
    name: "workflows",
    // Definitions are keyed by content hash within a namespace; `seq` orders registrations
    // so "latest of a name" is the last one registered (re-registering an old version makes
    // it the latest again). Runs carry their next event position so an engine commit appends
    // without reading; events are one row each, keyed by (run, position). Times are
    // milliseconds (BIGINT on PostgreSQL).
    sql: {
      sqlite: `
      CREATE TABLE workflow_definitions (
        namespace TEXT NOT NULL,
        version TEXT NOT NULL,
        name TEXT NOT NULL,
        canonical TEXT NOT NULL,
        registered_at INTEGER NOT NULL,
        registered_by TEXT NOT NULL,
        seq INTEGER NOT NULL,
        PRIMARY KEY (namespace, version)
      ) STRICT;
      CREATE INDEX workflow_definitions_latest ON workflow_definitions (namespace, name, seq);
      CREATE TABLE workflow_runs (
        run_id TEXT PRIMARY KEY,
        namespace TEXT NOT NULL,
        workflow_id TEXT NOT NULL,
        definition_version TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        ended_at INTEGER,
        output_json TEXT,
        failure_code TEXT,
        failure_message TEXT,
        next_seq INTEGER NOT NULL,
        UNIQUE (namespace, workflow_id)
      ) STRICT;
      CREATE INDEX workflow_runs_by_start ON workflow_runs (namespace, started_at, run_id);
      CREATE INDEX workflow_runs_running ON workflow_runs (status) WHERE status = 'Running';
      CREATE TABLE workflow_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      ) STRICT, WITHOUT ROWID;
    `,
      postgres: `
      CREATE TABLE workflow_definitions (
        namespace TEXT COLLATE "C" NOT NULL,
        version TEXT COLLATE "C" NOT NULL,
        name TEXT COLLATE "C" NOT NULL,
        canonical TEXT NOT NULL,
        registered_at BIGINT NOT NULL,
        registered_by TEXT NOT NULL,
        seq BIGINT NOT NULL,
        PRIMARY KEY (namespace, version)
      );
      CREATE INDEX workflow_definitions_latest ON workflow_definitions (namespace, name, seq);
      CREATE TABLE workflow_runs (
        run_id TEXT COLLATE "C" PRIMARY KEY,
        namespace TEXT COLLATE "C" NOT NULL,
        workflow_id TEXT COLLATE "C" NOT NULL,
        definition_version TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL,
        ended_at BIGINT,
        output_json TEXT,
        failure_code TEXT,
        failure_message TEXT,
        next_seq INTEGER NOT NULL,
        UNIQUE (namespace, workflow_id)
      );
      CREATE INDEX workflow_runs_by_start ON workflow_runs (namespace, started_at, run_id);
      CREATE INDEX workflow_runs_running ON workflow_runs (status) WHERE status = 'Running';
      CREATE TABLE workflow_events (
        run_id TEXT COLLATE "C" NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      );
    `,
    },
  },
  {
    version: 3,
    name: "worker_deployments",
    sql: {
      sqlite: `
      CREATE TABLE worker_deployments (
        name TEXT PRIMARY KEY,
        document TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
    `,
      postgres: `
      CREATE TABLE worker_deployments (
        name TEXT COLLATE "C" PRIMARY KEY,
        document TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
    `,
    },
  },
  {
    version: 4,
    name: "workflow_outbox",
    // Members of parallel and collect steps, written in the engine commit that creates
    // them: pending until the dispatcher claims them, claimed while it holds them, done
    // once handed off to a worker. Rows not done are reloaded after a restart.
    sql: {
      sqlite: `
      CREATE TABLE workflow_outbox (
        run_id TEXT NOT NULL,
        activity_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        namespace TEXT NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (run_id, activity_id, attempt)
      ) STRICT, WITHOUT ROWID;
      CREATE INDEX workflow_outbox_open ON workflow_outbox (state) WHERE state <> 'done';
    `,
      postgres: `
      CREATE TABLE workflow_outbox (
        run_id TEXT COLLATE "C" NOT NULL,
        activity_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        namespace TEXT COLLATE "C" NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (run_id, activity_id, attempt)
      );
      CREATE INDEX workflow_outbox_open ON workflow_outbox (state) WHERE state <> 'done';
    `,
    },
  },
  {
    version: 5,
    name: "agent_transcripts",
    // Transcript entries of agent attempts; seq keeps arrival order.
    sql: {
      sqlite: `
      CREATE TABLE agent_transcripts (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        activity_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        entry TEXT NOT NULL,
        at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX agent_transcripts_attempt ON agent_transcripts (run_id, activity_id, attempt, seq);
    `,
      postgres: `
      CREATE TABLE agent_transcripts (
        seq BIGSERIAL PRIMARY KEY,
        run_id TEXT COLLATE "C" NOT NULL,
        activity_id INTEGER NOT NULL,
        attempt INTEGER NOT NULL,
        entry TEXT NOT NULL,
        at BIGINT NOT NULL
      );
      CREATE INDEX agent_transcripts_attempt ON agent_transcripts (run_id, activity_id, attempt, seq);
    `,
    },
  },
  {
    version: 6,
    name: "workflow_runs_by_status",
    // A list filtered by status (Running, say) walks only the runs of that status, not
    // every run the namespace ever had.
    sql: `
      CREATE INDEX workflow_runs_by_status ON workflow_runs (namespace, status, started_at, run_id);
    `,
  },
  {
    version: 7,
    name: "cluster",
    // Cluster mode (docs/cluster.md), PostgreSQL only: the shard count fixed when the cluster
    // is created, the member nodes with their heartbeat, one lease row per shard (owner,
    // fencing epoch, expiry by the database clock), and the shard of every run and outbox
    // row. Rows written before this migration belong to shard 0. A single SQLite node owns
    // the one shard there is, so there the version only keeps the backends aligned.
    sql: {
      sqlite: "SELECT 1;",
      postgres: `
      CREATE TABLE cluster_meta (
        singleton BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton),
        shards INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now()
      );
      CREATE TABLE cluster_nodes (
        node_id TEXT COLLATE "C" PRIMARY KEY,
        incarnation BIGINT NOT NULL,
        http_url TEXT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL,
        heartbeat_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE shard_leases (
        shard INTEGER PRIMARY KEY,
        owner TEXT COLLATE "C",
        owner_incarnation BIGINT,
        epoch BIGINT NOT NULL DEFAULT 0,
        expires_at TIMESTAMPTZ NOT NULL DEFAULT 'epoch'
      );
      ALTER TABLE workflow_runs ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE workflow_outbox ADD COLUMN shard INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX workflow_runs_live_by_shard ON workflow_runs (shard)
        WHERE status IN ('Running', 'Paused');
      CREATE INDEX workflow_outbox_open_by_shard ON workflow_outbox (shard) WHERE state <> 'done';
    `,
    },
  },
  {
    version: 8,
    name: "workflow_runs_by_start_definition",
    // A list filtered by definition walks the start-time index and tests each run's version:
    // with the version in the index entry the test needs no read of the run's row, which
    // SQLite pays more for walking backwards (a newest-first list) than forwards. Both orders
    // then cost the same, and less than before. A PostgreSQL index scan reads the heap row
    // of each entry anyway (for visibility), as cheaply backwards as forwards, so there the
    // version only keeps the backends aligned.
    sql: {
      sqlite: `
      DROP INDEX workflow_runs_by_start;
      CREATE INDEX workflow_runs_by_start
        ON workflow_runs (namespace, started_at, run_id, definition_version);
    `,
      postgres: "SELECT 1;",
    },
  },
  {
    version: 9,
    name: "workflow_runs_by_definition",
    // A list filtered by definition reads, for each of the name's versions, that version's
    // runs in start order from this index and merges them: a rare definition no longer walks
    // every run the namespace started to find its few.
    sql: `
      CREATE INDEX workflow_runs_by_definition
        ON workflow_runs (namespace, definition_version, started_at, run_id);
    `,
  },
  {
    version: 10,
    name: "workflow_runs_without_next_seq",
    // An engine commit writes a run's row only when the run starts, changes status or ends,
    // not on every step (sql/run-commit.ts): a position kept in the row would go stale, so a
    // run the store has not loaded finds its next position from its events' primary key.
    // The row's `updated_at` is then its last transition's time; reads take a live run's from
    // its last event (sql/run-rows.ts).
    sql: "ALTER TABLE workflow_runs DROP COLUMN next_seq;",
  },
  {
    version: 11,
    name: "workflow_events_in_commit_order",
    // Keyed by (run, position), a commit's events land in as many B-tree pages as it has
    // runs (one page each in the closed loop: some 40 pages a commit), and each page goes
    // whole into the WAL. On SQLite the events now live in a rowid table, so a commit's
    // events are appended side by side at its end, and the (run, position) key, still
    // unique, is an index of small entries: about half the pages per commit. A PostgreSQL
    // heap already stores rows in insertion order, with (run, position) as an index, so
    // there the version only keeps the backends aligned.
    sql: {
      sqlite: `
      CREATE TABLE workflow_events_by_commit (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL
      ) STRICT;
      INSERT INTO workflow_events_by_commit (run_id, seq, event)
        SELECT run_id, seq, event FROM workflow_events;
      DROP TABLE workflow_events;
      ALTER TABLE workflow_events_by_commit RENAME TO workflow_events;
      CREATE UNIQUE INDEX workflow_events_by_run ON workflow_events (run_id, seq);
    `,
      postgres: "SELECT 1;",
    },
  },
  {
    version: 12,
    name: "workflow_events_per_append",
    // From this version on, a `workflow_events` row holds the events of one engine append:
    // a JSON array, its seq the position of the first (sql/run-commit.ts). A step appends two
    // events, so a commit writes half the rows and index entries. Rows written before stay
    // as they are (one event, a JSON object) and read alike; the version marks the format,
    // so a build that reads one event per row refuses a database written this way.
    sql: "SELECT 1;",
  },
  {
    version: 13,
    name: "workflow_runs_live",
    // `workflow_runs_running` (version 1) served no query: recovery asks for the live runs,
    // Running and Paused, which it does not cover, so SQLite scanned every run the database
    // ever had, and each start and end still wrote the index. On SQLite a partial index of
    // the live statuses takes its place, which recovery's load searches (EXPLAIN QUERY PLAN
    // in the store's tests); it costs a start or an end what the old one did. PostgreSQL
    // has `workflow_runs_live_by_shard` (version 7) for that load, so there the old index
    // goes with no successor and a start or an end writes one index entry fewer.
    sql: {
      sqlite: `
      DROP INDEX workflow_runs_running;
      CREATE INDEX workflow_runs_live ON workflow_runs (status)
        WHERE status IN ('Running', 'Paused');
    `,
      postgres: "DROP INDEX workflow_runs_running;",
    },
  },
];

/** Where the applied migrations are recorded (created before the first one runs). */
export const MIGRATIONS_TABLE = {
  sqlite: `
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at INTEGER NOT NULL
    ) STRICT`,
  postgres: `
    CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at BIGINT NOT NULL
    )`,
} as const;

export const LATEST_SCHEMA_VERSION = SCHEMA.at(-1)!.version;
