"""Try a skill from its schema (issue 37): on an agent's catalogue page, a form generated from
each declared ``application/json;schema=X`` input (or else a skill's seed 001 ``inputFields``,
composed into one schema by ``schemas_app.fields``), the exact A2A message it makes, snippets that
send it, the output schemas as tables, and (owner or staff of an opted-in agent) a send through
the live checks' sender. See docs/catalogue.md, "Try it".

It sits beside ``live`` above ``cards`` and ``schemas_app`` (it uses both, and the live checks'
wire and sender); ``cards`` knows it only through ``cards.hooks.agent_page_sections``.
"""
