"""What ``bench/house_servers.py`` runs and measures: the table server children, the driver
process posting their actions, the phones' run with its CPU accounting and the exactly-once
comparison, and the report."""
