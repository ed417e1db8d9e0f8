// The VectorTiles module; see docs/ARCHITECTURE.md.
