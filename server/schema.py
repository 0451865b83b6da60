"""The database's schema, as the migrations that build it (``PRAGMA user_version``).

Kept apart from the store's code because it is history, not logic: each entry is shipped once
and never edited, a change is a new entry appended, and :class:`server.store.Store` runs the
ones a database has not seen yet at open.
"""

from __future__ import annotations

# Each entry migrates from version i to i + 1; never edit a shipped entry, append a new one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE tables (
            id TEXT PRIMARY KEY,
            game TEXT NOT NULL,
            setup TEXT NOT NULL CHECK (json_valid(setup)),
            rules TEXT NOT NULL CHECK (json_valid(rules)),
            created TEXT NOT NULL,
            ended TEXT
        )""",
        """CREATE TABLE events (
            table_id TEXT NOT NULL REFERENCES tables(id),
            seq INTEGER NOT NULL CHECK (seq >= 1),
            at TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('camera', 'phone', 'button', 'replay')),
            type TEXT NOT NULL,
            payload TEXT NOT NULL CHECK (json_valid(payload)),
            PRIMARY KEY (table_id, seq)
        ) WITHOUT ROWID""",
        """CREATE TRIGGER events_no_update BEFORE UPDATE ON events
           BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END""",
        """CREATE TRIGGER events_no_delete BEFORE DELETE ON events
           BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END""",
        """CREATE TABLE snapshots (
            table_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            jpeg BLOB NOT NULL,
            PRIMARY KEY (table_id, seq),
            FOREIGN KEY (table_id, seq) REFERENCES events(table_id, seq)
        ) WITHOUT ROWID""",
        # Derived from the standing actions; rebuilt per table on undo/fix and at start.
        """CREATE TABLE records (
            id TEXT PRIMARY KEY,
            table_id TEXT NOT NULL REFERENCES tables(id),
            seq INTEGER NOT NULL,
            game TEXT NOT NULL,
            kind TEXT NOT NULL,
            player TEXT NOT NULL,
            points INTEGER NOT NULL,
            dice TEXT NOT NULL,
            text TEXT NOT NULL,
            at TEXT NOT NULL,
            snapshot_seq INTEGER
        )""",
        "CREATE INDEX records_by_game ON records (game, kind, points DESC)",
        "CREATE INDEX records_by_table ON records (table_id)",
        # Not derived: the PIN holder's decision survives every rebuild of ``records``.
        """CREATE TABLE hidden_records (
            id TEXT PRIMARY KEY,
            at TEXT NOT NULL
        )""",
        "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
    (
        # Derived, like ``records``: what the replay of a finished table gave (its table-list
        # summary), stamped with the rules code (``engine``) and the last event (``seq``) it
        # was derived from, so that a start need not replay the table while both still match.
        """CREATE TABLE table_digests (
            table_id TEXT PRIMARY KEY REFERENCES tables(id),
            engine TEXT NOT NULL,
            seq INTEGER NOT NULL,
            summary TEXT NOT NULL CHECK (json_valid(summary))
        ) WITHOUT ROWID""",
    ),
    (
        # The PIN holder's logged-in sessions, so that logging out ends a session for good,
        # copies of its cookie included: ``id`` is the SHA-256 of the random token the cookie
        # carries (the file alone gives no live cookie), ``version`` the PIN version it logged
        # in at, ``expires`` seconds since the epoch.
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            expires REAL NOT NULL
        ) WITHOUT ROWID""",
    ),
    (
        # A hide is for the record it was made on: what that record said, so that a fixed
        # roll (which keeps its record's id: the same log position) is judged afresh, and an
        # undone fix brings the hidden one back hidden. NULLs: a record gone when this came,
        # hidden by id alone as before.
        "ALTER TABLE hidden_records ADD COLUMN kind TEXT",
        "ALTER TABLE hidden_records ADD COLUMN player TEXT",
        "ALTER TABLE hidden_records ADD COLUMN points INTEGER",
        "ALTER TABLE hidden_records ADD COLUMN dice TEXT",
        """UPDATE hidden_records SET (kind, player, points, dice) =
           (SELECT kind, player, points, dice FROM records r WHERE r.id = hidden_records.id)""",
    ),
    (
        # Derived, like ``records``: each player's figures at each table
        # (:mod:`server.players.stats`), rebuilt for a table whenever its log grows, keyed by
        # the player's normalised name; ``rounds`` and ``costly`` are JSON.
        """CREATE TABLE player_tables (
            table_id TEXT NOT NULL REFERENCES tables(id),
            player TEXT NOT NULL,
            name TEXT NOT NULL,
            game TEXT NOT NULL,
            at TEXT NOT NULL,
            over INTEGER NOT NULL,
            win INTEGER NOT NULL,
            score INTEGER,
            turns INTEGER NOT NULL,
            blown INTEGER NOT NULL,
            points INTEGER NOT NULL,
            best_turn INTEGER NOT NULL,
            best_roll INTEGER NOT NULL,
            best_roll_dice TEXT NOT NULL,
            best_roll_seq INTEGER,
            rated_turns INTEGER NOT NULL,
            decisions INTEGER NOT NULL,
            given_away REAL NOT NULL,
            luck REAL NOT NULL,
            rounds TEXT NOT NULL CHECK (json_valid(rounds)),
            costly TEXT NOT NULL CHECK (json_valid(costly)),
            PRIMARY KEY (table_id, player)
        ) WITHOUT ROWID""",
        "CREATE INDEX player_tables_by_player ON player_tables (player, at DESC)",
        "CREATE INDEX player_tables_by_roll ON player_tables (player, best_roll DESC)",
        # What each table's rows were derived from: the derivation's stamp and the last seq.
        """CREATE TABLE player_derived (
            table_id TEXT PRIMARY KEY REFERENCES tables(id),
            stamp TEXT NOT NULL,
            seq INTEGER NOT NULL
        ) WITHOUT ROWID""",
        # Not derived: the PIN holder's decision, by the player's key, survives every rebuild.
        """CREATE TABLE hidden_players (
            player TEXT PRIMARY KEY,
            at TEXT NOT NULL
        ) WITHOUT ROWID""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
