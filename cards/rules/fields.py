"""Tables of the members each card object has, their types, and which are required."""

from __future__ import annotations

STRING, BOOLEAN, OBJECT = "a string", "a boolean", "an object"
STRINGS, OBJECTS = "an array of strings", "an array of objects"

CARD_FIELDS = {
    "name": STRING,
    "description": STRING,
    "supportedInterfaces": OBJECTS,
    "provider": OBJECT,
    "version": STRING,
    "documentationUrl": STRING,
    "capabilities": OBJECT,
    "securitySchemes": OBJECT,
    "securityRequirements": OBJECTS,
    "defaultInputModes": STRINGS,
    "defaultOutputModes": STRINGS,
    "skills": OBJECTS,
    "signatures": OBJECTS,
    "iconUrl": STRING,
    # v0.x members
    "url": STRING,
    "preferredTransport": STRING,
    "additionalInterfaces": OBJECTS,
    "protocolVersion": STRING,
    "supportsAuthenticatedExtendedCard": BOOLEAN,
    "supportsExtendedAgentCard": BOOLEAN,
    "security": OBJECTS,
    "authentication": OBJECT,
}
INTERFACE_FIELDS = {
    "url": STRING,
    "protocolBinding": STRING,
    "protocolVersion": STRING,
    "tenant": STRING,
    "transport": STRING,
}
PROVIDER_FIELDS = {"organization": STRING, "url": STRING}
CAPABILITY_FIELDS = {
    "streaming": BOOLEAN,
    "pushNotifications": BOOLEAN,
    "stateTransitionHistory": BOOLEAN,
    "extendedAgentCard": BOOLEAN,
    "extensions": OBJECTS,
}
EXTENSION_FIELDS = {"uri": STRING, "description": STRING, "required": BOOLEAN, "params": OBJECT}
SKILL_FIELDS = {
    "id": STRING,
    "name": STRING,
    "description": STRING,
    "tags": STRINGS,
    "examples": STRINGS,
    "inputModes": STRINGS,
    "outputModes": STRINGS,
    "securityRequirements": OBJECTS,
    "security": OBJECTS,
}
SIGNATURE_FIELDS = {"protected": STRING, "signature": STRING, "header": OBJECT}
SCHEME_FIELDS = {
    "type": STRING,
    "description": STRING,
    "in": STRING,
    "location": STRING,
    "name": STRING,
    "scheme": STRING,
    "bearerFormat": STRING,
    "flows": OBJECT,
    "openIdConnectUrl": STRING,
    "oauth2MetadataUrl": STRING,
}

_V1_REQUIRED = (
    "name",
    "description",
    "supportedInterfaces",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)
_V02_REQUIRED = (
    "name",
    "description",
    "url",
    "version",
    "capabilities",
    "defaultInputModes",
    "defaultOutputModes",
    "skills",
)
REQUIRED_BY_SHAPE: dict[str, tuple[str, ...]] = {
    "v1.0": _V1_REQUIRED,
    # a2a.json AgentCard.required since v0.2.5, and in v0.3.0, the last version of this
    # layout: a url-layout card that declares no version is judged by that version.
    "v0.3": (*_V02_REQUIRED, "protocolVersion"),
    "v0.2": (*_V02_REQUIRED, "protocolVersion"),
    # No endpoint is reported once as card.no-endpoint; the rest is checked as v1.0.
    "unknown": tuple(name for name in _V1_REQUIRED if name != "supportedInterfaces"),
}
SKILL_REQUIRED = ("id", "name", "description", "tags")
# Spec v1.0 section 5.7: required arrays must have at least one element.
NON_EMPTY_ARRAYS = frozenset(
    {"supportedInterfaces", "defaultInputModes", "defaultOutputModes", "skills", "tags"}
)
# Required strings that must not be blank. URLs are left to the url.* rules.
NON_EMPTY_STRINGS = frozenset(
    {"name", "description", "version", "id", "organization", "protocolBinding", "protocolVersion"}
)

# The protocol bindings spec v1.0 defines; any other binding is custom.
KNOWN_BINDINGS = ("JSONRPC", "GRPC", "HTTP+JSON")
