"""Where JSON Schema keeps subschemas: the keywords whose value is a schema, a list of schemas or
a map of schemas (every draft). The reference analysis and the budget's rewriting walk them."""

SCHEMA_KEYS = (
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)
SCHEMA_LIST_KEYS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAP_KEYS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
