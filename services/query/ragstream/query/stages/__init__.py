"""Query stages, one module each, in pipeline order: retrieve, fuse, answer."""
