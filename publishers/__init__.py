"""Publishers (issue 44): accounts that sign in on the catalogue, the tokens they manage, and
proof that an account runs an origin (scheme, host and port) before the registry acts for it.

It sits above ``cards`` (DESIGN.md, "Layers"): an agent belongs to the verified publisher of its
card's origin (:mod:`publishers.ownership`), and ``cards`` learns of it through its hooks and the
``Agent.publisher_origin`` column it renders; ``live`` and ``tryit`` ask :mod:`publishers.gates`
for a proof before they reach an endpoint.
"""
