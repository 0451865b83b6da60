"""The composition root: Flask app, SQLite event store, live feed, pad service and the CLI."""
