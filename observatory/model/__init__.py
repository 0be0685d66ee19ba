"""Pure records and cluster state built from API JSON: no I/O, no Textual."""
