"""A REST body that is not JSON is a 400 problem saying where and what in words, not in Python's
parser's (issue 47: "Expecting property name enclosed in double quotes" was the detail)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from registry.parsers import NOT_JSON


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ('{"url": "https://a.example",}', "line 1 column 29: a member name in double quotes"),
        ('{\n  "url": "https://a.example"\n  "x": 1\n}', "line 3 column 3: a ',' or a closing"),
        ('{"url" "https://a.example"}', "line 1 column 8: a ':' was expected"),
        ('{"url": https://a.example}', "line 1 column 9: a value was expected"),
        ('{"url": "https://a.example"} trailing', "line 1 column 30: more follows the end"),
        ('{"url": "https://a.exa', "line 1 column 9: a string starts here and is never closed"),
        ('{"url": "a\tb"}', "line 1 column 11: a control character"),
        ('{"url": NaN}', "NaN is not a JSON number"),
        ("   ", "it is empty or only white space"),
    ],
)
def test_a_body_that_is_not_json_is_named_in_words(
    client_auth: APIClient, body: str, detail: str
) -> None:
    response = client_auth.post("/api/v1/agents", body, content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == "/problems/malformed-request"
    assert problem["detail"].startswith(f"{NOT_JSON}: "), problem
    assert detail in problem["detail"], problem["detail"]
    assert "Expecting" not in problem["detail"] and "JSON parse error" not in problem["detail"]


def test_a_body_that_is_not_utf8_says_so_in_the_same_words(client_auth: APIClient) -> None:
    response = client_auth.post(
        "/api/v1/agents", b'{"url": "\xff"}', content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["detail"].startswith(f"{NOT_JSON}: the string at /url is not UTF-8")
