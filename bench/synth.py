"""Synthetic but realistic A2A agent cards, deterministic per (seed, index).

Shared by ``seed.py`` (bulk seeding), ``ingest.py`` (a loopback card server) and
``search_load.py`` (query values drawn from the same vocabularies). Standard library only.
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
from typing import Any

# About 300 tag words; their order is the popularity rank (Zipf-ish: the first is the commonest).
TAGS: tuple[str, ...] = tuple(
    """
    search chat summarization translation data analytics finance code travel maps
    weather calendar email scheduling customer-support sales marketing legal health research
    writing images documents pdf spreadsheets database sql python javascript devops
    monitoring security compliance hr recruiting education math science news shopping
    ecommerce payments invoices accounting tax crm erp logistics shipping inventory
    procurement routing navigation traffic geocoding real-estate insurance banking crypto
    trading forecasting reporting dashboards visualization charts ocr transcription speech audio
    video music podcasts social-media seo content copywriting proofreading grammar
    sentiment classification extraction ner embeddings rag retrieval knowledge-base wiki faq
    booking flights hotels restaurants recipes nutrition fitness medical pharmacy
    clinical genomics chemistry physics astronomy climate energy agriculture manufacturing
    iot robotics automotive aviation maritime telecom networking cloud kubernetes
    docker terraform aws azure gcp ci-cd testing qa code-review refactoring debugging
    documentation api-design graphql rest grpc json xml csv etl data-cleaning
    data-quality governance privacy gdpr hipaa audit risk fraud aml kyc identity
    authentication authorization access-control secrets vulnerability pentest threat-intel
    incident-response observability logging tracing alerting sre on-call ticketing jira
    github gitlab slack teams notion confluence project-management planning
    okr strategy consulting negotiation contracts procurement-law patents trademarks
    real-time streaming batch workflow orchestration automation rpa scraping crawling
    browser web forms surveys feedback reviews ratings recommendations personalization
    ads bidding pricing discounts loyalty subscriptions billing churn retention
    onboarding training tutoring language-learning exams grading lesson-plans
    kids parenting pets gardening home-automation smart-home energy-saving solar
    ev charging parking ride-sharing public-transit events tickets sports
    fantasy-sports betting games trivia puzzles storytelling poetry fiction screenwriting
    image-generation image-editing photo background-removal upscaling 3d cad design ux
    accessibility localization i18n timezones currency-conversion units calculator
    statistics probability optimization simulation scheduling-optimization
    supply-chain warehouse fleet maintenance field-service construction architecture
    interior-design fashion beauty dating mental-health meditation sleep journaling
    productivity notes reminders todo bookmarks archiving backup migration
    """.split()
)

# Words descriptions are made of, besides tags: queries for ``q=`` come from both.
NOUNS: tuple[str, ...] = tuple(
    """
    agent assistant service platform workflow pipeline report dashboard request response
    document invoice order shipment customer ticket message conversation summary answer
    question dataset table record schema model forecast trend anomaly metric alert
    account payment transaction portfolio budget expense contract policy claim patient
    appointment prescription itinerary flight hotel route map location address image photo
    video transcript recording playlist article post review comment product catalog price
    inventory supplier warehouse vehicle driver sensor device reading log trace incident
    repository commit pull-request build deployment cluster container service-level
    """.split()
)
VERBS: tuple[str, ...] = tuple(
    """
    analyzes summarizes translates extracts classifies generates answers plans books
    schedules monitors detects forecasts recommends tracks validates reconciles drafts
    reviews optimizes searches indexes transcribes converts enriches routes audits
    """.split()
)
ADJECTIVES: tuple[str, ...] = tuple(
    """
    fast accurate secure multilingual real-time scalable reliable private enterprise
    automated intelligent lightweight compliant interactive detailed concise structured
    """.split()
)
QUERY_WORDS: tuple[str, ...] = tuple(w for w in TAGS + NOUNS if "-" not in w and len(w) > 3)

_ORG_FIRST = (
    "North South East West Blue Green Red Silver Golden Bright Clear Swift Quantum Atlas "
    "Nova Apex Summit Harbor River Cedar Pine Oak Maple Iron Stone Crystal Vertex Orbit "
    "Pixel Signal Beacon Lumen Vector Nimbus Zephyr Aurora Polar Delta Sigma Helix Prism"
).split()
_ORG_SECOND = (
    "wind field light works labs systems data logic mind bridge point path wave gate "
    "forge stack cloud line craft scale sight flow spark core grid base ware hub"
).split()
_ORG_SUFFIX = ("Inc.", "Ltd", "GmbH", "LLC", "Labs", "AI", "Corp.", "Technologies", "", "")
_TLDS = ("com", "ai", "io", "dev", "net", "co", "org", "app")

_SCHEMA_AREAS = (
    "billing",
    "orders",
    "crm",
    "hr",
    "geo",
    "health",
    "finance",
    "support",
    "docs",
    "media",
    "travel",
    "iot",
    "security",
    "devops",
    "legal",
    "retail",
    "edu",
    "energy",
    "logistics",
    "ml",
)
_SCHEMA_ENTITIES = (
    "Invoice",
    "Order",
    "Customer",
    "Ticket",
    "Route",
    "Location",
    "Report",
    "Document",
    "Payment",
    "Shipment",
    "Patient",
    "Claim",
    "Forecast",
    "Alert",
    "Booking",
    "Quote",
    "Contract",
    "Event",
    "Metric",
    "Image",
    "Transcript",
    "Query",
    "Answer",
    "Summary",
    "Product",
    "Review",
    "Account",
    "Device",
    "Reading",
    "Task",
)
_SCHEMA_KINDS = ("Request", "Response", "Result", "Input", "Output")

EXTENSION_URIS: tuple[str, ...] = tuple(
    [
        f"https://a2a-extensions.{d}/{name}/v{v}"
        for d, name, v in itertools.islice(
            itertools.product(
                ("org", "dev"),
                (
                    "traceability",
                    "timestamp",
                    "secure-passport",
                    "agentic-commerce",
                    "receipts",
                    "scoped-auth",
                    "delegation",
                    "cost-estimate",
                    "rate-limits",
                    "provenance",
                    "geo-fence",
                    "pii-redaction",
                    "human-in-the-loop",
                    "streaming-artifacts",
                    "multi-tenant",
                ),
                (1, 2),
            ),
            60,
        )
    ]
)


def zipf_cum_weights(n: int, s: float = 1.0) -> list[float]:
    """Cumulative weights of ranks 1..n with weight 1/rank**s."""
    total = 0.0
    cum: list[float] = []
    for rank in range(1, n + 1):
        total += 1.0 / rank**s
        cum.append(total)
    return cum


class Pick:
    """A Zipf-ish sampler over a fixed population."""

    def __init__(self, population: tuple[str, ...] | list[str], s: float = 1.0) -> None:
        self.population = list(population)
        self.cum = zipf_cum_weights(len(self.population), s)

    def __call__(self, rng: random.Random) -> str:
        x = rng.random() * self.cum[-1]
        return self.population[bisect.bisect_right(self.cum, x)]


def _schema_names() -> list[str]:
    rng = random.Random(20240601)
    names = [
        f"{area}.{entity}{kind}.v{version}"
        for area in _SCHEMA_AREAS
        for entity in _SCHEMA_ENTITIES
        for kind in _SCHEMA_KINDS
        for version in (1,)
    ]  # 20 * 30 * 5 = 3000 names
    rng.shuffle(names)
    return names


SCHEMAS: tuple[str, ...] = tuple(_schema_names())


def _organizations() -> list[str]:
    rng = random.Random(777)
    orgs = {
        " ".join(
            filter(
                None,
                [
                    a + b.capitalize() if rng.random() < 0.6 else f"{a} {b.capitalize()}",
                    rng.choice(_ORG_SUFFIX),
                ],
            )
        )
        for a in _ORG_FIRST
        for b in _ORG_SECOND
    }
    ordered = sorted(orgs)
    rng.shuffle(ordered)
    return ordered


ORGANIZATIONS: tuple[str, ...] = tuple(_organizations())

pick_tag = Pick(TAGS, 1.0)
pick_schema = Pick(SCHEMAS, 0.8)
pick_org = Pick(ORGANIZATIONS, 0.7)
pick_ext = Pick(EXTENSION_URIS, 1.0)
pick_noun = Pick(NOUNS, 0.9)

_SKILLS_PER_AGENT = (1, 2, 3, 4, 5, 6, 7, 8)
_SKILL_WEIGHTS = (18, 24, 20, 13, 10, 7, 4, 4)


def _base(verb: str) -> str:
    return verb[:-3] + "y" if verb.endswith("ies") else verb[:-1]


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-").replace("--", "-")


def _sentence(rng: random.Random, topic: list[str]) -> str:
    words = [
        "The" if rng.random() < 0.5 else "This",
        rng.choice(ADJECTIVES),
        rng.choice(("agent", "assistant", "service")),
        rng.choice(VERBS),
        pick_noun(rng) + "s",
        "for",
        rng.choice(topic),
        rng.choice(("teams", "workflows", "use cases", "customers", "developers")),
    ]
    if rng.random() < 0.6:
        words += ["using", pick_noun(rng), "and", rng.choice(topic), "data"]
    return " ".join(words) + "."


def _mode_spelling(rng: random.Random, schema: str) -> str:
    # Publishers spell the same mode differently; the indexer canonicalises.
    r = rng.random()
    if r < 0.8:
        return f"application/json;schema={schema}"
    if r < 0.9:
        return f"application/json; schema={schema}"
    return f'Application/JSON; schema="{schema}"'


def _modes(rng: random.Random, direction: str) -> list[str]:
    modes: list[str] = []
    if direction == "input":
        if rng.random() < 0.75:
            modes.append("text/plain")
        if rng.random() < 0.55:
            modes.append("application/json")
        if rng.random() < 0.35:
            modes.append(_mode_spelling(rng, pick_schema(rng)))
        if rng.random() < 0.08:
            modes.append("image/png")
        if rng.random() < 0.05:
            modes.append(rng.choice(("audio/wav", "application/pdf", "text/csv", "image/jpeg")))
    else:
        if rng.random() < 0.7:
            modes.append("text/plain")
        if rng.random() < 0.5:
            modes.append("application/json")
        if rng.random() < 0.3:
            modes.append(_mode_spelling(rng, pick_schema(rng)))
        if rng.random() < 0.12:
            modes.append("image/png")
        if rng.random() < 0.08:
            extra = ("text/markdown", "text/html", "application/pdf", "audio/mpeg")
            modes.append(rng.choice(extra))
    return modes or ["text/plain"]


def make_card(seed: int, index: int) -> dict[str, Any]:
    """The card of synthetic agent ``index``: about 85% v1.0 layout, 15% v0.3."""
    rng = random.Random(seed * 1_000_003 + index)
    org = pick_org(rng)
    domain = f"{_slug(org.split()[0])}-{index}.{rng.choice(_TLDS)}"
    topic = [pick_tag(rng) for _ in range(3)]
    name = " ".join(w.capitalize() for w in (topic[0].replace("-", " "), pick_noun(rng))) + " Agent"
    description = " ".join(_sentence(rng, topic) for _ in range(rng.randint(1, 3)))
    n_skills = rng.choices(_SKILLS_PER_AGENT, _SKILL_WEIGHTS)[0]
    skills: list[dict[str, Any]] = []
    for position in range(n_skills):
        stags: list[str] = []
        for _ in range(rng.randint(1, 6)):
            tag = topic[rng.randrange(3)] if rng.random() < 0.3 else pick_tag(rng)
            if rng.random() < 0.05:
                tag = tag.capitalize()  # the indexer lower-cases
            stags.append(tag)
        verb = rng.choice(VERBS)
        noun = pick_noun(rng)
        skill_id = f"{_base(verb)}-{noun}-{position}"
        if rng.random() < 0.1:  # not kebab-case: a warning, as on real cards
            skill_id = _base(verb) + noun.capitalize() + str(position)
        skill: dict[str, Any] = {
            "id": skill_id,
            "name": f"{_base(verb).capitalize()} {noun}s",
            "description": _sentence(rng, stags),
            "tags": stags,
        }
        if rng.random() < 0.6:
            skill["examples"] = [
                f"{_base(verb).capitalize()} the {noun}s from last {rng.choice(('week', 'month'))}"
                for _ in range(rng.randint(1, 3))
            ]
        if rng.random() < 0.4:
            skill["inputModes"] = _modes(rng, "input")
        if rng.random() < 0.4:
            skill["outputModes"] = _modes(rng, "output")
        skills.append(skill)

    extensions: list[dict[str, Any]] = []
    if rng.random() < 0.25:
        for uri in dict.fromkeys(pick_ext(rng) for _ in range(rng.randint(1, 2))):
            ext: dict[str, Any] = {"uri": uri, "description": f"Supports {uri.rsplit('/', 2)[-2]}."}
            if rng.random() < 0.2:
                ext["required"] = True
            if rng.random() < 0.3:
                ext["params"] = {"level": rng.randint(1, 3)}
            extensions.append(ext)

    base = f"https://{domain}"
    card: dict[str, Any] = {
        "name": name,
        "description": description,
        "provider": {"organization": org, "url": f"https://www.{_slug(org.split()[0])}.com"},
        "version": f"{rng.randint(0, 3)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
        "capabilities": {
            "streaming": rng.random() < 0.5,
            "pushNotifications": rng.random() < 0.2,
        },
        # 3% spell a legacy mode word ("text"): a warning, and no index row for it.
        "defaultInputModes": _modes(rng, "input") + (["text"] if rng.random() < 0.03 else []),
        "defaultOutputModes": _modes(rng, "output"),
        "skills": skills,
    }
    if rng.random() < 0.5:
        card["documentationUrl"] = f"{base}/docs"
    if rng.random() < 0.3:
        card["iconUrl"] = f"{base}/icon.png"
    if extensions:
        card["capabilities"]["extensions"] = extensions
    if rng.random() < 0.15:  # v0.3 layout
        card = {
            "protocolVersion": "0.3.0",
            **card,
            "url": f"{base}/a2a/v1",
            "preferredTransport": "JSONRPC",
        }
    else:
        card["supportedInterfaces"] = [
            {"url": f"{base}/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ]
        if rng.random() < 0.3:
            card["supportedInterfaces"].append(
                {
                    "url": f"{base}/a2a/rest",
                    "protocolBinding": "HTTP+JSON",
                    "protocolVersion": "1.0",
                }
            )
    return card


def card_bytes(seed: int, index: int) -> bytes:
    return json.dumps(make_card(seed, index), indent=2, ensure_ascii=False).encode("utf-8")


def agent_origin(seed: int, index: int) -> str:
    """The origin a synthetic agent is submitted with (unique per index)."""
    return f"https://agent-{seed}-{index}.registry-bench.example.com"
