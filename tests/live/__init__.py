"""Real A2A agents on 127.0.0.1 for the live-conformance tests (see agents.py)."""
