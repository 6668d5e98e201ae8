"""Session-wide fixtures: the real Kafka broker and Elasticsearch node, started on demand.

Registered as plugins (not imported into test modules) so that a session never starts a
second broker or node.
"""

pytest_plugins = ["tests.support.kafka", "tests.support.elasticsearch"]
