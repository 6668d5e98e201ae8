"""The event bus (protocols.py) and its backends: an embedded SQLite log, Kafka."""
