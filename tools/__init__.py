"""Maintainers' scripts: generators for the data files observatory ships."""
