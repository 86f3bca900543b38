"""Results over time: result sets added to one SQLite database (their configurations,
environment, middleware versions, statistics and where their raw samples are), and the
trend of each configuration with the changes the significance tests call real
(docs/history.md)."""
