"""The one normal form of a URL (cards/url_form.py): spellings folded, hostile input refused."""

from __future__ import annotations

import httpx
import pytest

from cards.url_form import InvalidURL, normalise_url

CARD = "https://agents.example/rejected-card/card.json"


@pytest.mark.parametrize(
    "spelling",
    [
        "https://agents.example/rejected-card/./card.json",
        "https://agents.example/rejected-card//card.json",
        "https://agents.example//rejected-card/card.json",
        "https://agents.example/rejected-card/%63ard.json",
        "https://agents.example/%72ejected-card/card%2Ejson",
        "https://agents.example/rejected-card/card.json/",
        "https://agents.example/rejected-card/x/../card.json",
        "https://agents.example/rejected-card/%2E/card.json",
        "https://agents.example/a/%2e%2E/rejected-card/card.json",
        "https://agents.example./rejected-card/card.json",
        "HTTPS://AGENTS.Example:443/rejected-card/card.json",
        "https://agents.example:0443/rejected-card/card.json",
        "https://agents.example/rejected-card/card.json#top",
        "https://%61gents.example/rejected-card/card.json",
        "  https://agents.example/rejected-card/card.json  ",
    ],
)
def test_every_spelling_of_one_card_url_has_one_normal_form(spelling: str) -> None:
    assert normalise_url(spelling) == CARD


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Reserved characters stay encoded, with upper-case hex: %2F is not a slash.
        ("https://h.example/a%2fb/c", "https://h.example/a%2Fb/c"),
        ("https://h.example/a%2Fb%3f%23", "https://h.example/a%2Fb%3F%23"),
        # .. above the root stays at the root.
        ("https://h.example/../../etc/passwd", "https://h.example/etc/passwd"),
        ("https://h.example/a/b/../../..", "https://h.example"),
        ("https://h.example/./", "https://h.example"),
        ("https://h.example//", "https://h.example"),
        # The path's case is the publisher's.
        ("HTTPS://Example.COM:443/Path/Card.json#frag", "https://example.com/Path/Card.json"),
        # A directory-like path loses its trailing slash too (servers redirect one to the other).
        ("https://h.example/agents/foo/", "https://h.example/agents/foo"),
        ("https://h.example/v1.0/", "https://h.example/v1.0"),
        # The query is kept as it is: order, +, empty values; only escapes are normalised.
        ("https://h.example/c?b=2&a=1", "https://h.example/c?b=2&a=1"),
        ("https://h.example/c?q=a+b&q=&x", "https://h.example/c?q=a+b&q=&x"),
        ("https://h.example/c?q=%7e%2b%26", "https://h.example/c?q=~%2B%26"),
        ("https://h.example/c/?q=1", "https://h.example/c?q=1"),
        ("https://h.example?q=1", "https://h.example/?q=1"),
        ("https://h.example/?q=1", "https://h.example/?q=1"),
        ("https://h.example/c?", "https://h.example/c"),
        # Characters a URL may not hold as they are: encoded as UTF-8.
        ("https://h.example/café", "https://h.example/caf%C3%A9"),
        ("https://h.example/caf%c3%a9", "https://h.example/caf%C3%A9"),
        ('https://h.example/a"b|c^d{e}[f]', "https://h.example/a%22b%7Cc%5Ed%7Be%7D%5Bf%5D"),
        ("https://h.example/x?a=[1]", "https://h.example/x?a=%5B1%5D"),
        ("https://h.example/;p=1@:!$&'()*+,=", "https://h.example/;p=1@:!$&'()*+,="),
        # Hosts: IDN to punycode (UTS 46 mapping), the trailing dot, IP literals.
        ("https://Bücher.example./", "https://xn--bcher-kva.example"),
        ("https://bücher。example/", "https://xn--bcher-kva.example"),
        ("https://ex\u00adample.com/", "https://example.com"),
        ("https://XN--BCHER-KVA.example/", "https://xn--bcher-kva.example"),
        ("http://127.0.0.1.:8080/c", "http://127.0.0.1:8080/c"),
        ("https://[::1]:8080/x", "https://[::1]:8080/x"),
        ("https://[0:0:0:0:0:0:0:1]/x", "https://[::1]/x"),
        ("https://[2001:DB8::0:1]/", "https://[2001:db8::1]"),
        # Every spelling the fetch policy reads as one IPv4 address is its dotted quad.
        ("http://[::FFFF:10.0.0.1]/", "http://10.0.0.1"),
        ("http://127.1:8080/c", "http://127.0.0.1:8080/c"),
        ("http://2130706433/c", "http://127.0.0.1/c"),
        ("http://0x7f000001/c", "http://127.0.0.1/c"),
        ("http://0X7F.0.0.1/c", "http://127.0.0.1/c"),
        ("http://0177.0.0.1/c", "http://127.0.0.1/c"),
        ("http://127.0.0.1./c", "http://127.0.0.1/c"),
        # Not an address: names that look numeric in part stay names.
        ("https://1.example/c", "https://1.example/c"),
        ("https://0x1g.example/c", "https://0x1g.example/c"),
        # Ports: the default dropped, another kept, an empty one is none.
        ("http://h.example:80/", "http://h.example"),
        ("http://h.example:443/", "http://h.example:443"),
        ("https://h.example:/c", "https://h.example/c"),
        ("https://h.example:8443", "https://h.example:8443"),
    ],
)
def test_the_normal_form(raw: str, expected: str) -> None:
    assert normalise_url(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "example.com",
        "//example.com/x",
        "https://",
        "https://user@example.com",
        "https://user:pw@example.com/",
        "https://@example.com/",
        "http://a@127.0.0.1@example.com/",
        "https://exa mple.com",
        "https://example.com/a b",
        "https://example.com/\x00",
        "https://example.com/\x7f",
        "https://example.com\\@evil.example/",
        "https://example.com:99999",
        "https://example.com:port/",
        "https://example.com/a%zzb",
        "https://example.com/a%2",
        "https://example.com/%",
        "https://example.com/?q=%g0",
        "https://example.com/\ud800",
        "https://example..com/",
        "https://.example.com/",
        "https://example.com../",
        "https://%2F%2Fevil.example/",
        "https://ex%00ample.com/",
        "https://ex%ffample.com/",
        "https://[fe80::1%25eth0]/",
        "https://[not-ipv6]/",
        "https://\u0301a.example/",
        "https://a\u202e.example/",
    ],
)
def test_unusable_urls_are_refused_with_a_reason(raw: str) -> None:
    with pytest.raises(InvalidURL) as caught:
        normalise_url(raw)
    assert str(caught.value)


SAMPLES = [
    CARD,
    "https://h.example",
    "https://h.example/?q=1",
    "https://h.example/a%2Fb/caf%C3%A9?x=%5B1%5D&y=a+b",
    "http://[::1]:8080/x",
    "https://xn--bcher-kva.example/a;b=c@d",
    "http://127.0.0.1:9/card.json",
]


@pytest.mark.parametrize("url", SAMPLES)
def test_the_normal_form_is_stable(url: str) -> None:
    """Normalising again changes nothing, and the fetcher's parser (httpx) requests the very
    same text, so what is fetched is what is stored and compared."""
    assert normalise_url(url) == url
    assert str(httpx.URL(url)) == url
