"""`make bench`: reproducible measurements, written to bench-results.json and printed."""
