"""One widget per file, each named for what it shows."""
