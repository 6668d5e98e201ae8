"""Session-wide fixtures: the real Kafka broker and Elasticsearch node, started on demand.

Registered as plugins (not imported into test modules) so that a session never starts a
second broker or node.
"""

from hypothesis import settings

pytest_plugins = ["tests.support.kafka", "tests.support.elasticsearch"]

# Property tests assert behaviour, never speed: no per-example deadline (hypothesis's
# default 200 ms would make them timed tests on a loaded machine).
settings.register_profile("ragstream", deadline=None)
settings.load_profile("ragstream")
