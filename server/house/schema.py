"""The house database's schema (PostgreSQL), as versioned migrations applied at start.

Like :mod:`server.schema` for SQLite: each entry is shipped once and never edited; a change is
a new entry appended. Whoever connects first (a table server shipping, or ``dicepad house``)
applies what is missing, under an advisory lock so that two starting at once do not race.

Names: a *house name* is one table server's name in the house (``--house-name``, by default
its host name); a table's id is only unique within its house name.
"""

from __future__ import annotations

#: ``pg_advisory_xact_lock`` key held while migrating (any constant both sides agree on)
MIGRATION_LOCK = 0x0D1CE9AD

#: LISTEN/NOTIFY channel: a JSON payload ``{"house_name", "table", "seq"}`` per shipped batch
#: (sent in the shipping transaction, so delivered only once it commits), and
#: ``{"records": true}`` when the house PIN holder hides or shows a record
CHANNEL = "dicepad_house"

# Each entry migrates from version i to i + 1; never edit a shipped entry, append a new one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        # One row per table server that ships here. ``instance`` is the random id a table
        # server keeps in its own SQLite settings: a second server claiming a name in use
        # (another instance) is refused.
        """CREATE TABLE members (
            house_name TEXT PRIMARY KEY CHECK (house_name <> ''),
            instance TEXT NOT NULL,
            url TEXT NOT NULL DEFAULT '',
            claimed TIMESTAMPTZ NOT NULL DEFAULT now(),
            seen TIMESTAMPTZ NOT NULL DEFAULT now()
        )""",
        # A table as its server created it, plus its line in the table list (``summary``, the
        # table server's own, at ``summary_seq``) and the last seq the house holds.
        """CREATE TABLE tables (
            house_name TEXT NOT NULL REFERENCES members (house_name),
            table_id TEXT NOT NULL,
            game TEXT NOT NULL,
            setup JSONB NOT NULL,
            rules JSONB NOT NULL,
            created TEXT NOT NULL,
            ended TEXT,
            summary JSONB,
            summary_seq BIGINT NOT NULL DEFAULT 0,
            last_seq BIGINT NOT NULL DEFAULT 0,
            PRIMARY KEY (house_name, table_id)
        )""",
        # The logs, append-only as on the table servers: exactly once per key, in order
        # (the shipper only inserts seq = last_seq + 1, ...).
        """CREATE TABLE events (
            house_name TEXT NOT NULL,
            table_id TEXT NOT NULL,
            seq BIGINT NOT NULL CHECK (seq >= 1),
            at TEXT NOT NULL,
            source TEXT NOT NULL,
            type TEXT NOT NULL,
            payload JSONB NOT NULL,
            snapshot BOOLEAN NOT NULL DEFAULT false,
            shipped TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (house_name, table_id, seq),
            FOREIGN KEY (house_name, table_id) REFERENCES tables (house_name, table_id)
        )""",
        """CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN RAISE EXCEPTION 'the event log is append-only'; END $$""",
        """CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
           FOR EACH ROW EXECUTE FUNCTION refuse_change()""",
        # Derived on the table server (its record wall for that table, replaced whole with
        # each shipped batch that reaches the table's head); ``hidden_at_table``: hidden by
        # that table server's own PIN holder.
        """CREATE TABLE records (
            house_name TEXT NOT NULL,
            id TEXT NOT NULL,
            table_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            game TEXT NOT NULL,
            kind TEXT NOT NULL,
            player TEXT NOT NULL,
            points INTEGER NOT NULL,
            dice JSONB NOT NULL,
            text TEXT NOT NULL,
            at TEXT NOT NULL,
            snapshot_seq BIGINT,
            hidden_at_table BOOLEAN NOT NULL DEFAULT false,
            PRIMARY KEY (house_name, id),
            FOREIGN KEY (house_name, table_id) REFERENCES tables (house_name, table_id)
        )""",
        "CREATE INDEX records_wall ON records (game, kind, points DESC, at)",
        "CREATE INDEX records_by_table ON records (house_name, table_id)",
        # The house PIN holder's decision, kept apart so that no reshipping undoes it.
        """CREATE TABLE hidden_records (
            house_name TEXT NOT NULL,
            id TEXT NOT NULL,
            at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (house_name, id)
        )""",
        # The house PIN's hash and other house settings.
        "CREATE TABLE settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
    (
        # The whole house wall biggest first (``/api/house/records`` unfiltered, or by house
        # name): ``records_wall`` leads with the game, so without this every read sorted every
        # record (34 ms at 100,000 on a desktop, several times that on a Pi, and growing).
        "CREATE INDEX records_points ON records (points DESC, at)",
    ),
    (
        # Players across the house (issue 36): derived BY THE HOUSE from the events it holds,
        # with the table servers' own pure derivation (:func:`server.players.stats.from_log`),
        # so the log stays the one truth and no table server ships figures. One row per
        # player (the key of :mod:`server.players.names`) per table; ``rounds`` and ``costly``
        # are JSON as on a table server.
        """CREATE TABLE player_tables (
            house_name TEXT NOT NULL,
            table_id TEXT NOT NULL,
            player TEXT NOT NULL,
            name TEXT NOT NULL,
            game TEXT NOT NULL,
            at TEXT NOT NULL,
            over BOOLEAN NOT NULL,
            win BOOLEAN NOT NULL,
            score INTEGER,
            turns INTEGER NOT NULL,
            blown INTEGER NOT NULL,
            points BIGINT NOT NULL,
            best_turn INTEGER NOT NULL,
            best_roll INTEGER NOT NULL,
            best_roll_dice JSONB NOT NULL,
            best_roll_seq BIGINT,
            rated_turns INTEGER NOT NULL,
            decisions INTEGER NOT NULL,
            given_away DOUBLE PRECISION NOT NULL,
            luck DOUBLE PRECISION NOT NULL,
            rounds JSONB NOT NULL,
            costly JSONB NOT NULL,
            PRIMARY KEY (house_name, table_id, player),
            FOREIGN KEY (house_name, table_id) REFERENCES tables (house_name, table_id)
        )""",
        "CREATE INDEX player_tables_by_player ON player_tables (player, at DESC)",
        "CREATE INDEX player_tables_by_roll ON player_tables (player, best_roll DESC, at)",
        # What each table's rows were derived from: the derivation's code stamp and the last
        # seq; a start re-derives the tables behind ``tables.last_seq`` or derived by other code.
        """CREATE TABLE player_derived (
            house_name TEXT NOT NULL,
            table_id TEXT NOT NULL,
            stamp TEXT NOT NULL,
            seq BIGINT NOT NULL,
            PRIMARY KEY (house_name, table_id),
            FOREIGN KEY (house_name, table_id) REFERENCES tables (house_name, table_id)
        )""",
        # Not derived: the house PIN holder's decision, by the player's key.
        """CREATE TABLE hidden_players (
            player TEXT PRIMARY KEY,
            at TIMESTAMPTZ NOT NULL DEFAULT now()
        )""",
    ),
    (
        # The house PIN holder's logged-in page sessions, so that logging out ends a session
        # for good, copies of its cookie included (as a table server's ``sessions``): ``id``
        # is the SHA-256 of the random token the cookie carries, ``version`` the PIN version
        # it logged in at.
        """CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            version INTEGER NOT NULL,
            expires TIMESTAMPTZ NOT NULL
        )""",
        "CREATE INDEX sessions_expiry ON sessions (expires)",
    ),
    (
        # The players each table server's own PIN holder hid (its SQLite ``hidden_players``),
        # by the player's key: that server's whole set, replaced by its shipper at every
        # connection and after every hide or show there. A player listed here for ANY member
        # is hidden from the house's public pages. Apart from ``hidden_players`` (the house
        # PIN holder's own), so that neither side undoes the other's decision.
        """CREATE TABLE players_hidden_at_table (
            house_name TEXT NOT NULL REFERENCES members (house_name),
            player TEXT NOT NULL,
            at TIMESTAMPTZ NOT NULL DEFAULT now(),
            PRIMARY KEY (house_name, player)
        )""",
        "CREATE INDEX players_hidden_at_table_by_player ON players_hidden_at_table (player)",
    ),
)

SCHEMA_VERSION = len(MIGRATIONS)
