"""Try a skill from its schema (issue 37): on a skill's own page, linked from its agent's
catalogue page and built when opened (issue 43), a form generated from the skill's declared
``application/json;schema=X`` input (or else its seed 001 ``inputFields``,
composed into one schema by ``schemas_app.fields``), the exact A2A message it makes, snippets that
send it, the output schemas as tables, and (owner or staff of an opted-in agent) a send through
the live checks' sender. See docs/catalogue.md, "Try it".

It sits beside ``live`` above ``cards`` and ``schemas_app`` (it uses both, and the live checks'
wire and sender); ``cards`` knows it only through ``cards.hooks.agent_page_sections``.
"""
