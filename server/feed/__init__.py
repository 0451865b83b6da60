"""The live feed: server-sent events to every phone watching a table.

Moved here whole from the flat ``server/feed*.py`` modules (issue 34); each module says what it
owns.
"""
