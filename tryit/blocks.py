"""One "Try it" block per skill with a structured input: its first ``application/json;schema=X``
input mode (seed 000), else its ``inputFields`` (seed 001, composed into one schema by
schemas_app.fields). A block holds the schema, the examples that validate, the request the form
makes, its snippets and the output tables."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cards.models import Agent, Skill
from live import instances
from live.interfaces import JSONRPC, Interface, interfaces_of
from live.message_checks import sender
from registry.mediatypes import schema_modes
from schemas_app.fields import read_fields
from schemas_app.payloads import DeclaredSchemas
from schemas_app.skill_inputs import SkillInput, card_entry, input_of
from tryit import messages, outputs
from tryit.labels import example_label

# Keywords whose values are data, not schemas: left as they are.
_VALUES = frozenset({"default", "examples", "enum", "const"})
# Candidate examples looked at per skill (each is validated; a card may list many).
MAX_EXAMPLES = 8


@dataclass
class Example:
    label: str
    payload: Any


@dataclass
class Output:
    name: str
    rows: list[dict[str, Any]]
    cut: bool
    declared: bool


@dataclass
class Block:
    skill_id: str
    skill_name: str
    schema_name: str  # "" for a schema composed from inputFields
    media_type: str
    schema: Any
    reason: str  # why the form falls back to a JSON editor ("" when the form may render)
    examples: list[Example]
    payload: Any
    # The example the form starts from (1-based; 0: none): the first, or the one a page link
    # asked for (``?example=N``, so an example works without JavaScript).
    chosen: int = 0
    outputs: list[Output] = field(default_factory=list)
    # The skill's outputFields (seed 001), a row each: field, kind, media types, description,
    # required (not optional).
    output_fields: list[dict[str, Any]] = field(default_factory=list)
    # inputFields: what was left out of the composed schema; for a schema'd block, the names
    # of the inputFields it also declares (the schema'd mode is the one tried).
    field_notes: list[dict[str, str]] = field(default_factory=list)
    also_fields: list[str] = field(default_factory=list)
    interface: Interface | None = None
    body: dict[str, Any] | None = None
    curl: str = ""
    python: str = ""
    curl_template: str = ""
    python_template: str = ""
    sdk_message: dict[str, Any] | None = None

    @property
    def from_fields(self) -> bool:
        return not self.schema_name

    @property
    def slug(self) -> str:
        return "".join(c if c.isalnum() else "-" for c in self.skill_id)[:60]

    def config(self, *, validate_url: str, send_url: str | None) -> str:
        """What the page's script needs, as JSON for a data attribute (autoescaped)."""
        return json.dumps(
            {
                "skill": self.skill_id,
                # The validator takes {"skill": id} for inputFields, {"schema": name} otherwise.
                "schemaName": self.schema_name,
                "schema": for_form(self.schema) if not self.reason else None,
                # A JSON editor's errors are still said by the fields' labels (words.js).
                "wordsSchema": self.schema
                if self.reason and isinstance(self.schema, dict)
                else None,
                "reason": self.reason,
                "examples": [{"label": e.label, "payload": e.payload} for e in self.examples],
                "payload": self.payload,
                "body": self.body,
                "dataPath": messages.data_path(self.interface) if self.interface else None,
                "sdkMessage": self.sdk_message,
                "sdkPath": messages.sdk_path(),
                "curl": self.curl_template,
                "python": self.python_template,
                "placeholder": messages.PLACEHOLDER,
                "validateUrl": validate_url,
                "sendUrl": send_url,
            }
        )


def for_form(schema: Any, depth: int = 0) -> Any:
    """The schema as the form library reads it: it shows ``help_text`` under a field, not
    ``description``, so each description is given as help too (validation keeps the original)."""
    if depth > 32:
        return schema
    if isinstance(schema, list):
        return [for_form(item, depth + 1) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        key: value if key in _VALUES else for_form(value, depth + 1)
        for key, value in schema.items()
    }
    if isinstance(schema.get("description"), str) and "help_text" not in schema:
        out["help_text"] = schema["description"]
    return out


def _candidates(skill: Skill, schema: Any) -> list[Example]:
    """The skill's examples that are JSON (seed 000 writes them as JSON text), then the
    schema's own ``examples``; each named by its values (tryit.labels)."""
    values: list[Any] = []
    for text in skill.examples or []:
        if not isinstance(text, str):
            continue
        try:
            values.append(json.loads(text))
        except ValueError:
            continue
    listed = schema.get("examples") if isinstance(schema, dict) else None
    values += listed if isinstance(listed, list) else []
    # The same example in the skill and in its schema is one link, not two of the same name.
    seen: set[str] = set()
    unique = []
    for value in values:
        key = json.dumps(value, sort_keys=True)
        if key not in seen:
            seen.add(key)
            unique.append(value)
    name = skill.name or skill.skill_id
    return [
        Example(example_label(value, schema, f"{name}, example {index + 1}"), value)
        for index, value in enumerate(unique[:MAX_EXAMPLES])
    ]


def _initial(schema: Any, examples: list[Example], valid: Callable[[Any], bool]) -> Any:
    if examples:
        return examples[0].payload
    try:
        built = instances.build(schema)
    except instances.CannotBuild:
        return {}
    return built if valid(built) else {}


def _reason(schema: Any, usable: bool) -> str:
    """Why the form library is not given the schema (the page's script adds the library's own
    reason when it refuses one)."""
    if not usable:
        return "the registry cannot use this schema (see its problems on the schema's page)"
    if not isinstance(schema, dict):
        return "the schema is not a JSON object"
    if schema.get("type") not in ("object", None) or "properties" not in schema:
        return "the schema does not describe an object with properties"
    return ""


def _outputs(skill: Skill, declared: DeclaredSchemas) -> list[Output]:
    out = []
    for _media, name in schema_modes(skill.output_modes):
        document = declared.documents.get(name)
        content = document.content if document is not None else None
        rows, cut = outputs.rows(content)
        out.append(Output(name=name, rows=rows, cut=cut, declared=document is not None))
    return out


def _output_fields(raw: Any) -> list[dict[str, Any]]:
    """The skill's outputFields (seed 001) as table rows."""
    card_skill = raw if isinstance(raw, dict) else {}
    return outputs.field_rows(read_fields(card_skill.get("outputFields"), "").fields)


def interface_of(agent: Agent) -> Interface | None:
    """Where the message goes: the live checks' sender (JSON-RPC first, then HTTP+JSON); the
    first declared interface when neither binding is there (shown, never sent)."""
    # The agent row keeps the card's interfaces (v1.0 shape): no read of the snapshot.
    declared = agent.interfaces if isinstance(agent.interfaces, list) else []
    found = interfaces_of({"supportedInterfaces": declared}, agent.shape)
    return sender(found) or (found[0] if found else None)


def _block(found: SkillInput, declared: DeclaredSchemas) -> Block:
    """The form's part of a block: schema, examples, first payload and outputs."""
    skill = found.skill
    if found.fields is not None:
        schema: Any = found.fields.schema
        usable = found.fields.usable
        reason = "" if usable else "none of the skill's inputFields can be used (see below)"
    else:
        document = declared.documents.get(found.schema_name or "")
        schema = document.content if document is not None else None
        usable = document is not None
        reason = _reason(schema, bool(document and document.usable))

    def valid(payload: Any) -> bool:
        return bool(found.check(payload, declared).get("valid"))

    examples = [e for e in _candidates(skill, schema) if valid(e.payload)] if usable else []
    block = Block(
        skill_id=skill.skill_id,
        skill_name=skill.name or skill.skill_id,
        schema_name=found.schema_name or "",
        media_type=found.media_type,
        schema=schema,
        reason=reason,
        examples=examples,
        payload=_initial(schema, examples, valid) if usable else {},
        chosen=1 if examples else 0,
        outputs=_outputs(skill, declared),
    )
    if found.fields is not None:
        block.field_notes = found.fields.fields.notes
    else:
        block.also_fields = found.field_names()
    return block


def blocks_of(agent: Agent, skills: list[Skill], *, example: int = 0) -> list[Block]:
    """The blocks of the agent's skills; no query for an agent without skills, one (the card's
    skills) for an agent with none to try. ``example`` (1-based) picks the example each form
    starts from, where there is one of that number."""
    if not skills:
        return []
    # Each skill's card entry alone (a card may hold thousands of skills; a page shows one).
    found = [
        (item, raw)
        for skill in skills
        if (item := input_of(skill, raw := card_entry(agent, skill))) is not None
    ]
    if not found:
        return []
    declared = DeclaredSchemas.of(agent)
    interface = interface_of(agent)
    v1 = Interface(url=interface.url if interface else "", binding=JSONRPC, version="1.0")
    card_url = agent.card_url or agent.url
    out = []
    for item, raw in found:
        block = _block(item, declared)
        if 0 < example <= len(block.examples):
            block.payload = block.examples[example - 1].payload
            block.chosen = example
        block.output_fields = _output_fields(raw)
        block.interface = interface
        block.sdk_message = messages.message(v1, block.payload, block.media_type)
        block.python_template = messages.python_template(card_url)
        block.python = messages.fill(block.python_template, block.sdk_message)
        if interface is not None:
            block.body = messages.body(interface, block.payload, block.media_type)
            block.curl_template = messages.curl_template(interface)
            block.curl = messages.fill(block.curl_template, block.body)
        out.append(block)
    return out
