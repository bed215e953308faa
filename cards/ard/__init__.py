"""ARD (Agentic Resource Discovery): identifiers, manifests and entry projections (docs/ard.md)."""
