// The QueryLanguage module; see docs/ARCHITECTURE.md.
