"""The ARD Registry API (docs/ard.md): search, explore, list and lookup under ``/ard/``."""
