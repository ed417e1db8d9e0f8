// The Routing module; see docs/ARCHITECTURE.md.
