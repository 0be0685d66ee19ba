"""Modal screens: choosing a node or namespace, confirming a bind, the key list."""
