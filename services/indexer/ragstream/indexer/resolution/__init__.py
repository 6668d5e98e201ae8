"""Entity resolution: same-as evidence recorded per chunk (stage 1), alias groups derived
from the evidence present (stage 2). See docs/architecture.md, "Entity resolution"."""
