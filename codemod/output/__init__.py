"""What a run shows: text, JSON, GitHub, SARIF, the migration report, rule docs."""
