"""What ``bench/crash_harness.py`` (and the tests that run it at CI size) kill and check: the
``dicepad serve`` child and its API, the posting client and its ledger, the checks after a
kill, the kill loop, and the torn-write variants of a power cut."""
