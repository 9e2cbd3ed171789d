"""Data generators: the 1990 BASIC chain (faithful) and numpy-seeded models (modern)."""
