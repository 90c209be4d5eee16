"""Settings: pyproject.toml, declared requirements, and what a run is asked to do."""
