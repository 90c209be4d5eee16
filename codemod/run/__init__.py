"""Running over files: discovery, reading and writing, the worker pool, notebooks."""
