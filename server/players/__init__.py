"""Players: who sat at the tables, their history, their records and how well they play.

One module a job: ``names`` (one player per name however it was typed), ``series`` (the
score by round of a table, for the charts), ``rating`` (the coach's verdict on a Farkle
turn: points given away by decisions below the best play, and luck), ``stats`` (the pure
derivation of a table's replay into one frozen row per player), ``service`` (the worker
that keeps the rows up to date as events are logged, and the queries the pages make) and
``api`` (the JSON routes). The rows are per table and per player, so the house server can
aggregate the same rows across a bar's table servers.
"""
