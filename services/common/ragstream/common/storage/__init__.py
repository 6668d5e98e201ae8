"""Storage roles (protocols.py) and their backends."""
