from __future__ import annotations

import pytest

from registry.mediatypes import MediaType, MediaTypeError, is_legacy_mode_word, parse_media_type


@pytest.mark.parametrize(
    "text",
    [
        "application/json; schema=X",
        'application/json;schema="X"',
        "Application/JSON;schema=X",
        "application/json ;  schema = X",
        "  application/json;schema=X\t",
    ],
)
def test_the_spellings_of_one_schema_mode_share_a_canonical_form(text: str) -> None:
    media_type = parse_media_type(text)

    assert media_type.canonical == "application/json;schema=X"
    assert media_type.essence == "application/json"
    assert media_type.schema == "X"


def test_type_subtype_and_parameter_names_are_lower_cased_but_values_keep_their_case() -> None:
    media_type = parse_media_type("Application/Vnd.Geo+JSON;Schema=FightComparison")

    assert media_type == MediaType("application", "vnd.geo+json", (("schema", "FightComparison"),))


def test_charset_values_are_lower_cased_because_they_are_case_insensitive() -> None:
    assert parse_media_type('text/plain; charset="UTF-8"').canonical == "text/plain;charset=utf-8"


def test_parameters_are_sorted_by_name() -> None:
    media_type = parse_media_type("text/plain;format=flowed;charset=utf-8;delsp=yes")

    assert [name for name, _ in media_type.params] == ["charset", "delsp", "format"]
    assert media_type.canonical == "text/plain;charset=utf-8;delsp=yes;format=flowed"


def test_quoted_values_are_unescaped_and_requoted_only_when_needed() -> None:
    media_type = parse_media_type(r'application/json;schema="a b\"c\\d";v="token"')

    assert media_type.schema == 'a b"c\\d'
    assert media_type.param("v") == "token"
    assert media_type.canonical == r'application/json;schema="a b\"c\\d";v=token'


def test_an_empty_quoted_value_stays_quoted_in_the_canonical_form() -> None:
    assert parse_media_type('application/json;schema=""').canonical == 'application/json;schema=""'


def test_the_canonical_form_parses_back_to_the_same_media_type() -> None:
    media_type = parse_media_type('Text/Plain; Title="x;y=z"; charset=UTF-8')

    assert parse_media_type(media_type.canonical) == media_type
    assert str(media_type) == media_type.canonical


@pytest.mark.parametrize("text", ["*/*", "image/*", "application/*+json"])
def test_wildcards_parse(text: str) -> None:
    assert parse_media_type(text).canonical == text


def test_empty_parameters_and_a_trailing_semicolon_are_ignored() -> None:
    assert parse_media_type("text/plain;;charset=utf-8;").canonical == "text/plain;charset=utf-8"


def test_param_lookup_ignores_case_and_is_none_when_absent() -> None:
    media_type = parse_media_type("application/json;Schema=X")

    assert media_type.param("SCHEMA") == "X"
    assert media_type.param("charset") is None
    assert parse_media_type("text/plain").schema is None


@pytest.mark.parametrize("word", ["text", "file", "data", "Text", " image "])
def test_bare_legacy_mode_words_are_not_media_types(word: str) -> None:
    assert is_legacy_mode_word(word)
    with pytest.raises(MediaTypeError, match="legacy mode word"):
        parse_media_type(word)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "json",
        "telepathy",
        "text/",
        "/plain",
        "text/plain/extra",
        "text plain",
        "a/b c",
        "text/plain;charset",
        "text/plain;=utf-8",
        'text/plain;x="unterminated',
        'text/plain;x="bad escape\\',
        'text/plain;x="control\x01char"',
        "téxt/plain",
        "text/plain;x=a b",
    ],
)
def test_malformed_media_types_raise(text: str) -> None:
    with pytest.raises(MediaTypeError):
        parse_media_type(text)


def test_a_parameter_given_twice_is_refused() -> None:
    with pytest.raises(MediaTypeError, match="twice"):
        parse_media_type("application/json;schema=A;SCHEMA=B")


@pytest.mark.parametrize("value", [None, 3, ["text/plain"], b"text/plain"])
def test_non_strings_raise_media_type_error(value: object) -> None:
    with pytest.raises(MediaTypeError):
        parse_media_type(value)  # type: ignore[arg-type]


def test_media_type_error_is_a_value_error() -> None:
    assert issubclass(MediaTypeError, ValueError)
