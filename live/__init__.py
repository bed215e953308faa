"""Live conformance checks: what an agent's declared endpoints answer (docs/live-checks.md).

Everything else the registry says about an agent comes from its card file; this package asks the
agent itself. Transport checks send only requests that cannot start work (a task id that cannot
exist, an unknown method, a body that is not JSON, an unsupported version); message checks send
real messages and run only for agents whose owner opted in (``Agent.probe_messages``).

Modules: ``interfaces`` (which endpoints a card declares), ``exchange`` (one request through the
registry's fetcher, kept as a short excerpt), ``wire`` (A2A request and answer shapes per binding
and version), ``transport_checks``, ``instances`` (a payload from a JSON Schema),
``message_checks``, ``report`` (outcomes, ``since``), ``runner`` (one agent's run), ``store``,
``tasks`` and ``api``.
"""
