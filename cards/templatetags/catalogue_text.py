"""Template filters for the catalogue's text."""

from __future__ import annotations

import re

from django import template
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

# Where a long token such as application/json;schema=fightComparison may break.
_BREAK_AFTER = re.compile(r"([;/,])")


@register.filter
def break_points(value: object) -> SafeString:
    """The value escaped, with <wbr> after each ';', '/' and ',': a facet value then wraps at
    its parameters instead of mid-word."""
    escaped = str(conditional_escape(str(value)))
    return mark_safe(_BREAK_AFTER.sub(r"\1<wbr>", escaped))  # noqa: S308 - escaped above
