// The Engine module; see docs/ARCHITECTURE.md.
