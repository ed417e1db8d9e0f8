// The SpatialIndex module; see docs/ARCHITECTURE.md.
