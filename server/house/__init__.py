"""The house: every table server (Pi) of a bar shipping its event logs to one PostgreSQL
database, and the house server reading them (issue 35).

Each table server keeps its own SQLite log as the truth for its tables and never waits on the
house (:mod:`server.house.shipper`); the house database holds a copy of every log, in order and
exactly once per (house name, table, seq), plus what each table server derived from it (its
table-list line and its records), so the house pages never replay a game.
"""
