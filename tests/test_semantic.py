"""Natural-language search (docs/search.md): the real model, PostgreSQL, recall first with a
calibrated score, ``confident`` and ``matched_skill``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from django.core.management import call_command

from cards.models import Agent
from cards.reads import gate
from search import lexical, semantic
from search.embedding import model, store, texts
from search.index import snapshot, vectors, writing
from search.matches import WEAK_SCORE
from search.models import AgentEmbedding
from tests.factories import agent_from_card, minimal_card
from tests.support import CORPUS

pytestmark = pytest.mark.django_db

DEMO = Path(__file__).resolve().parent.parent / "cards" / "demo"
CORPUS_CARDS = (
    "027-samples-generator-weather",
    "015-a2a-cli-testdata-full",
    "068-dad-joke-agent-templated",
    "059-registry-anybrowse",
    "023-samples-adk-currency-agent",
)

needs_model = pytest.mark.skipif(
    not model.available(), reason="the embedding model package is not installed"
)


@pytest.fixture(autouse=True)
def _fresh_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test reads vectors from its own database rows and snapshot directory."""
    monkeypatch.setattr(snapshot, "directory", lambda: tmp_path / "index")
    vectors.reset()
    yield
    vectors.reset()


@pytest.fixture
def registry() -> dict[str, Agent]:
    """The demo agents and a few corpus cards, embedded."""
    agents: dict[str, Agent] = {}
    for path in sorted(DEMO.glob("*.json")):
        agents[f"demo/{path.stem}"] = agent_from_card(
            path.read_bytes(), url=f"https://{path.stem}.demo.example/.well-known/agent-card.json"
        )
    if CORPUS.is_dir():
        for stem in CORPUS_CARDS:
            agents[stem] = agent_from_card(
                (CORPUS / f"{stem}.json").read_bytes(),
                url=f"https://{stem}.corpus.example/.well-known/agent-card.json",
            )
    store.embed_agents([agent.pk for agent in agents.values()])
    return agents


def _names(found: list[Any]) -> list[str]:
    ids = [pk for pk, _ in found]
    names = dict(Agent.objects.filter(pk__in=ids).values_list("pk", "name"))
    return [names[pk] for pk in ids]


def test_text_of_an_agent_leaves_out_payload_examples() -> None:
    text = texts.compose(
        name="Fight Club Oracle",
        description="Predicts fights.",
        ard_entry={"representativeQueries": ["who wins, lion or tiger?"]},
        skills=[("Fight", "Who wins.", ['{"a": "Lion"}', "Lion or tiger?", "Lion or tiger?"])],
    )
    assert text.splitlines() == [
        "Fight Club Oracle",
        "Predicts fights.",
        "who wins, lion or tiger?",
        "Fight",
        "Who wins.",
        "Lion or tiger?",
    ]
    # A skill's own text keeps each example once too: a repeat would weigh it twice in the mean.
    skill = texts.skill_text(
        "Fight", "Who wins.", ["Lion or tiger?", '{"a": 1}', " Lion  or tiger? ", "Bear?"], ["zoo"]
    )
    assert skill.splitlines() == ["Fight", "Who wins.", "Lion or tiger?", "Bear?", "zoo"]


@needs_model
def test_a_paraphrased_need_finds_the_agent(registry: dict[str, Agent]) -> None:
    agents = gate.agents(include_gone=False)
    found = semantic.rank("will it rain in Porto this weekend", agents, limit=5)
    assert found and found[0][0] in {
        registry["demo/weather"].pk,
        registry.get("027-samples-generator-weather", registry["demo/weather"]).pk,
    }
    assert all(0 <= score <= 100 for _, score in found)
    assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
    found = semantic.rank("I need this English email in German", agents, limit=3)
    assert registry["demo/polyglot"].pk in [pk for pk, _ in found]


@needs_model
def test_a_framed_need_ranks_as_the_bare_need(registry: dict[str, Agent]) -> None:
    """A request frame ("is there an agent which can …", search/request_frame.py) changes
    neither the order nor the scores, and the lexical side (which already leaves such words
    out) agrees."""
    agents = gate.agents(include_gone=False)
    for bare in ("will it rain in Porto this weekend", "who would win, a lion or a tiger"):
        plain = [m.why() | {"id": m.id} for m in semantic.rank(bare, agents, limit=5)]
        asked = [
            m.why() | {"id": m.id}
            for m in semantic.rank(f"Is there an agent which can say {bare}", agents, limit=5)
        ]
        said = [m.why() | {"id": m.id} for m in semantic.rank(f"say {bare}", agents, limit=5)]
        assert asked == said and said[0]["id"] == plain[0]["id"]


@needs_model
def test_a_need_no_agent_serves_has_no_confident_result(registry: dict[str, Agent]) -> None:
    """Recall first: weak matches may be listed, but none is confident, and min_score=50 (what
    a caller wanting silence passes) returns nothing."""
    agents = gate.agents(include_gone=False)
    for need in ("qwzx blorf gnarble vrrp", "fix a leaking kitchen faucet"):
        found = semantic.rank(need, agents, limit=10)
        assert not any(match.confident for match in found), [m.why() for m in found]
        assert semantic.rank(need, agents, limit=10, min_score=50) == []
        assert semantic.matched_ids(need, agents, min_score=50) == []


@needs_model
def test_ranking_and_facets_list_the_same_agents(registry: dict[str, Agent]) -> None:
    agents = gate.agents(include_gone=False)
    need = "plan a route that avoids traffic"
    ranked = semantic.rank(need, agents, limit=100)
    assert ranked and ranked[0].confident
    assert [pk for pk, _ in ranked] == semantic.matched_ids(need, agents)
    top = ranked[0][1]
    kept = semantic.rank(need, agents, limit=100, min_score=top)
    assert kept and all(score >= top for _, score in kept)
    assert [pk for pk, _ in kept] == semantic.matched_ids(need, agents, min_score=top)


@needs_model
def test_a_paraphrase_that_shares_no_word_finds_the_agent_through_its_skill(
    registry: dict[str, Agent],
) -> None:
    """Max pooling over skills: the need matches one skill of the card, not the card's
    average, and the result says which skill (matched_skill)."""
    agents = gate.agents(include_gone=False)
    if "015-a2a-cli-testdata-full" not in registry:
        pytest.skip("the corpus is only on the project's machines")
    found = semantic.rank("three tablespoons is how much in millilitres", agents, limit=3)
    assert found[0].id == registry["015-a2a-cli-testdata-full"].pk
    assert found[0].confident and found[0].matched_skill == "Convert Measurements"
    found = semantic.rank("who would win, a lion or a tiger", agents, limit=3)
    assert found[0].id == registry["demo/fight-club"].pk and found[0].matched_skill


@needs_model
def test_ranking_never_widens_the_agents_given(registry: dict[str, Agent]) -> None:
    weather = registry["demo/weather"]
    Agent.objects.filter(pk=weather.pk).update(moderation=Agent.Moderation.HIDDEN)
    found = semantic.rank("weather forecast for tomorrow", gate.agents(), limit=10)
    assert weather.pk not in [pk for pk, _ in found]
    only = gate.agents().filter(pk=registry["demo/polyglot"].pk)
    found = semantic.rank("translate a web page into French", only, limit=10)
    assert [pk for pk, _ in found] == [registry["demo/polyglot"].pk]
    assert semantic.rank("translate a web page into French", only, limit=10, offset=1) == []


@needs_model
@pytest.mark.needs_shared
def test_the_api_ranks_with_mode_semantic(
    shared_dir: Path, registry: dict[str, Agent], client_anon: Any
) -> None:
    # The question is answered by a corpus card (../shared).
    response = client_anon.get(
        "/api/v1/agents", {"q": "how many grams is a cup of flour", "mode": "semantic"}
    )
    assert response.status_code == 200, response.content
    results = response.json()["results"]
    assert results and all(0 <= item["score"] <= 100 for item in results)
    assert all({"confident", "matched_skill"} <= set(item) for item in results)
    assert results[0]["id"] == str(registry["015-a2a-cli-testdata-full"].pk)
    assert results[0]["confident"] is True
    assert results[0]["matched_skill"] == "Convert Measurements"
    # q means the need: ranked by default where the model is available; mode=lexical filters.
    default = client_anon.get("/api/v1/agents", {"q": "how many grams is a cup of flour"})
    assert [item["id"] for item in default.json()["results"]] == [r["id"] for r in results]
    lexical = client_anon.get(
        "/api/v1/agents", {"q": "how many grams is a cup of flour", "mode": "lexical"}
    )
    assert lexical.status_code == 200 and "score" not in str(lexical.json()["results"])
    # min_score keeps the confident ones; a bad one is a clear 400.
    sure = client_anon.get(
        "/api/v1/agents", {"q": "how many grams is a cup of flour", "min_score": 50}
    ).json()["results"]
    assert sure and all(item["confident"] for item in sure)
    for bad in ("-1", "101", "high"):
        refused = client_anon.get("/api/v1/agents", {"q": "flour", "min_score": bad})
        assert refused.status_code == 400, refused.content
        assert refused["Content-Type"].startswith("application/problem+json")


@needs_model
def test_mode_semantic_without_q_with_a_bad_mode_and_with_filters(
    registry: dict[str, Agent], client_anon: Any
) -> None:
    # Without q there is nothing to rank: the usual list, newest first.
    without_q = client_anon.get("/api/v1/agents", {"mode": "semantic"})
    assert without_q.status_code == 200 and "score" not in without_q.json()["results"][0]
    assert client_anon.get("/api/v1/agents", {"q": "x", "mode": "vector"}).status_code == 400
    # Filters narrow the ranked list.
    narrowed = client_anon.get(
        "/api/v1/agents", {"q": "weather forecast", "mode": "semantic", "tag": "no-such-tag"}
    )
    assert narrowed.json()["results"] == []


@needs_model
def test_pages_of_a_ranked_list(registry: dict[str, Agent], client_anon: Any) -> None:
    params = {"q": "maps routes weather and translations", "mode": "semantic", "limit": 1}
    first = client_anon.get("/api/v1/agents", params).json()
    seen = [item["id"] for item in first["results"]]
    link = first["next"]
    while link:
        page = client_anon.get(link).json()
        seen += [item["id"] for item in page["results"]]
        link = page["next"]
    assert len(seen) == len(set(seen)) >= 2


@needs_model
def test_the_catalogue_search_box_ranks(registry: dict[str, Agent], client: Any) -> None:
    response = client.get("/", {"q": "who would win, a lion or a tiger"})
    assert response.status_code == 200
    body = response.content.decode()
    assert "Fight Club Oracle" in body and "match " in body and "via skill" in body
    assert "What do you need?" in body
    # Unsure matches are shown under a "less likely" divider, after the confident ones, and
    # those under WEAK_SCORE collapsed after them (what is unsure depends on the agents loaded:
    # the corpus cards are absent on a fresh clone). tests/test_weak_matches.py has more.
    ranked = client.get("/api/v1/agents", {"q": "who would win, a lion or a tiger"}).json()
    unsure = [
        item["name"]
        for item in ranked["results"]
        if not item["confident"] and item["score"] >= WEAK_SCORE
    ]
    weaker = [item["name"] for item in ranked["results"] if item["score"] < WEAK_SCORE]
    assert ("Less likely" in body) == bool(unsure)
    if unsure:
        assert body.index("Fight Club Oracle") < body.index("Less likely")
        assert body.index("Less likely") < body.index(unsure[0])
    assert ('<details class="weaker"' in body) == bool(weaker)


def test_lexical_fallback_when_embeddings_are_off(
    settings: Any, client_anon: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.REGISTRY_EMBEDDINGS = "off"
    model.reset()
    try:
        weather = agent_from_card((DEMO / "weather.json").read_bytes())
        agent_from_card((DEMO / "polyglot.json").read_bytes())
        assert not semantic.semantic_available()
        assert "search is lexical" in caplog.text
        assert store.embed_agents([weather.pk]) == 0
        found = semantic.rank("radar forecast", gate.agents(), limit=5)
        assert [pk for pk, _ in found] == [weather.pk]
        assert semantic.rank("qwzx blorf", gate.agents(), limit=5) == []
        # Without the model q keeps its lexical filter by default.
        listed = client_anon.get("/api/v1/agents", {"q": "radar forecast"}).json()["results"]
        assert "score" not in str(listed)
        response = client_anon.get("/api/v1/agents", {"q": "radar forecast", "mode": "semantic"})
        assert [item["id"] for item in response.json()["results"]] == [str(weather.pk)]
    finally:
        settings.REGISTRY_EMBEDDINGS = "auto"
        model.reset()


@needs_model
def test_reembed_command_writes_only_what_changed(registry: dict[str, Agent]) -> None:
    AgentEmbedding.objects.all().delete()
    call_command("reembed", "--no-snapshot")
    assert AgentEmbedding.objects.count() == len(registry)
    seqs = dict(AgentEmbedding.objects.values_list("agent_id", "seq"))
    call_command("reembed", "--no-snapshot")
    assert dict(AgentEmbedding.objects.values_list("agent_id", "seq")) == seqs
    weather = registry["demo/weather"]
    Agent.objects.filter(pk=weather.pk).update(description="Tide tables for sailors.")
    call_command("reembed")
    changed = dict(AgentEmbedding.objects.values_list("agent_id", "seq"))
    assert [pk for pk in changed if changed[pk] != seqs[pk]] == [weather.pk]
    index = vectors.index()
    index.refresh()
    assert len(index.snapshot.ids) == len(index) == len(registry)  # the command's snapshot


@needs_model
def test_snapshot_and_delta_agree(registry: dict[str, Agent]) -> None:
    query = model.embed_query("weather radar")
    exact = vectors.index().nearest(query, 3)
    needs = ("weather radar", "convert euros to yen", "tell me a joke about cats")
    agents = gate.agents(include_gone=False)
    ranked = [
        [(m.id, m.score, m.matched_skill) for m in semantic.rank(n, agents, limit=9)] for n in needs
    ]
    assert writing.save_snapshot() == len(registry)
    vectors.reset()
    index = vectors.index()
    index.refresh()
    assert len(index.snapshot.ids) == len(registry) and not index.delta
    from_snapshot = index.nearest(query, 3)
    assert [pk for pk, _ in from_snapshot] == [pk for pk, _ in exact]
    # The graph's candidates are scored exactly: the same ranking as the exact scan of the
    # delta (skill rows are float16 in a snapshot: a score may move by a point).
    assert set(index.candidates(query, len(registry))) == {a.pk for a in registry.values()}
    for need, before in zip(needs, ranked, strict=True):
        after = [(m.id, m.score, m.matched_skill) for m in semantic.rank(need, agents, limit=9)]
        assert [(pk, skill) for pk, _, skill in after] == [(pk, skill) for pk, _, skill in before]
        assert all(abs(a[1] - b[1]) <= 1 for a, b in zip(after, before, strict=True)), need
    # A vector written after the snapshot is read from the database, superseding it.
    weather = registry["demo/weather"]
    Agent.objects.filter(pk=weather.pk).update(description="Sourdough baking recipes.")
    store.embed_agents([weather.pk])
    index.refresh(force=True)
    assert weather.pk in index.delta


@needs_model
def test_embedding_again_runs_only_the_texts_that_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent whose card changed is embedded again, but the model runs only its changed
    texts: the rows of unchanged ones are kept, and they are what the model gives them."""
    from cards.models import Skill

    card = minimal_card(name="Tide Tables", description="Harbour tides and the moon.")
    card["skills"] = [
        {"id": f"s{i}", "name": text, "description": text, "tags": []}
        for i, text in enumerate(("harbour tide times", "moon phases", "surf forecast"))
    ]
    agent = agent_from_card(card, url="https://tides.rows.example/.well-known/agent-card.json")
    store.embed_agents([agent.pk])
    first = AgentEmbedding.objects.get(agent=agent)
    assert len(bytes(first.row_digests)) == 8 * 4  # a key per row: the whole text, 3 skills
    ran: list[str] = []
    real = model.embed

    def spy(texts: Any) -> Any:
        ran.extend(texts)
        return real(texts)

    monkeypatch.setattr(model, "embed", spy)
    Skill.objects.filter(agent=agent, skill_id="s1").update(description="lunar calendar")
    assert store.embed_agents([agent.pk]) == 1
    whole, *skills = texts.agent_texts([agent.pk])[agent.pk]
    assert ran == [whole, skills[1]]  # the whole text has every skill's: it changed too
    again = AgentEmbedding.objects.get(agent=agent)
    old_rows = np.frombuffer(bytes(first.vector), dtype="<f4").reshape(-1, model.DIM)
    new_rows = np.frombuffer(bytes(again.vector), dtype="<f4").reshape(-1, model.DIM)
    assert np.array_equal(new_rows[[1, 3]], old_rows[[1, 3]])  # rows 0 and 2 changed
    assert not np.array_equal(new_rows[0], old_rows[0]) and not np.array_equal(
        new_rows[2], old_rows[2]
    )
    ran.clear()
    assert store.embed_agents([agent.pk], force=True) == 1  # every text through the model
    assert len(ran) == 4
    assert bytes(AgentEmbedding.objects.get(agent=agent).vector) == bytes(again.vector)
    # A row stored before the keys were (no row_digests) is run again, then keyed.
    AgentEmbedding.objects.filter(agent=agent).update(row_digests=b"", text_sha256="")
    ran.clear()
    assert store.embed_agents([agent.pk]) == 1
    assert len(ran) == 4 and len(bytes(AgentEmbedding.objects.get(agent=agent).row_digests)) == 32


@needs_model
def test_a_stored_card_is_embedded_by_the_task(
    django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    settings.CELERY_TASK_ALWAYS_EAGER = True
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        agent = agent_from_card(
            minimal_card(name="Sommelier", description="Pairs wines with dishes.")
        )
    assert callbacks
    row = AgentEmbedding.objects.get(agent=agent)
    assert row.model == model.model_id()
    assert len(bytes(row.vector)) % (model.DIM * 4) == 0
    found = semantic.rank("which wine goes with salmon", gate.agents(), limit=3)
    assert found and found[0][0] == agent.pk


def test_embedding_text_is_stored_as_digest_only(registry: dict[str, Agent]) -> None:
    if not model.available():
        pytest.skip("the embedding model package is not installed")
    row = AgentEmbedding.objects.get(agent=registry["demo/weather"])
    parts = texts.agent_texts([registry["demo/weather"].pk])[registry["demo/weather"].pk]
    assert row.text_sha256 == texts.digest("\x1e".join(parts), model.model_id())
    # The whole text's row, then one per skill.
    assert len(bytes(row.vector)) == model.DIM * 4 * len(parts)
    assert json.loads(json.dumps(parts))  # plain text


@needs_model
def test_the_index_library_then_the_model_in_one_process() -> None:
    """usearch's native library loaded before ONNX Runtime's crashed the process; the index
    now loads the runtime first (search.embedding.model.load_runtime_first)."""
    import subprocess
    import sys

    code = (
        "import django; django.setup()\n"
        "from search.embedding import model\n"
        "from search.index import snapshot\n"
        "assert snapshot.Snapshot.open('no-such-snapshot') is None\n"
        "print(model.embed(['hello']).shape)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "(1, 384)" in done.stdout


@needs_model
def test_an_agent_with_every_word_of_the_need_is_never_under_the_floor(
    registry: dict[str, Agent], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where words are shared the lexical side still helps: with a floor no cosine reaches, the
    agent having every telling word of the need is still listed; one with only some is not."""
    weather = registry["demo/weather"]
    name = Agent.objects.get(pk=weather.pk).name.lower()
    need = " ".join(word for word in name.split() if len(word) > 2)
    assert need, name
    monkeypatch.setattr(semantic, "FLOOR", 10.0)
    agents = gate.agents(include_gone=False)
    found = [pk for pk, _ in semantic.rank(need, agents, limit=20)]
    assert weather.pk in found
    assert all(lexical.word_shares(need, agents, [pk], 0).get(pk) == 1.0 for pk in found), (
        "only agents having every word pass a floor nothing else reaches"
    )


def test_a_float16_snapshot_is_read_and_the_next_one_is_built_in_int8(
    registry: dict[str, Agent], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade never leaves readers without a snapshot: the one written before (float16
    graph) is read as it is, and the worker's next snapshot holds every row in int8."""
    query = model.embed_query("weather radar")
    exact = [pk for pk, _ in vectors.index().nearest(query, 3)]
    monkeypatch.setattr(snapshot, "GRAPH_DTYPE", "f16")
    assert writing.save_snapshot() == len(registry)
    vectors.reset()
    older = vectors.index()
    older.refresh()
    assert "16" in str(older.snapshot.graph.dtype) and not older.delta
    assert [pk for pk, _ in older.nearest(query, 3)] == exact
    monkeypatch.setattr(snapshot, "GRAPH_DTYPE", "i8")
    weather = registry["demo/weather"]
    Agent.objects.filter(pk=weather.pk).update(description="Sourdough baking recipes.")
    store.embed_agents([weather.pk])  # something changed, so a new snapshot is written
    assert writing.save_snapshot() == len(registry)
    vectors.reset()
    newer = vectors.index()
    newer.refresh()
    assert newer.snapshot.name != older.snapshot.name
    assert "8" in str(newer.snapshot.graph.dtype) and not newer.delta
    rows = len(newer.snapshot.ids) + len(newer.snapshot.skills)
    assert len(newer.snapshot.graph) == rows  # every row, not only the changed agent's
    # What nearest() says of each agent is its cosine, whatever the graph's element type: its
    # best row's, scored exactly (the int8 graph's own order may put an agent's second-best
    # row first: a test run on 9b8b26c caught it; the graph only gives the candidates).
    found = newer.nearest(query, rows)
    assert len(found) == len(registry)
    cosines = newer.similarities(query, [pk for pk, _ in found])
    assert found and all(abs(cos - cosines[pk]) < 1e-3 for pk, cos in found), (found, cosines)


@needs_model
def test_the_lexical_query_over_the_gates_condition_agrees_with_djangos(
    registry: dict[str, Agent], django_user_model: Any
) -> None:
    """The lexical share is one statement built around the gate's compiled condition; every
    viewer and filter gives what Django's own query gives, and a join falls back to it."""
    from protocols.ard import filters

    owner = django_user_model.objects.create_user("lexical-owner", password="pw-lexical-1")
    hidden = registry["demo/weather"]
    Agent.objects.filter(pk=hidden.pk).update(
        moderation=Agent.Moderation.PENDING, submitted_by=owner
    )
    ids = [agent.pk for agent in registry.values()]
    needs = ("weather forecast for tomorrow", "translate currency", "convert weather units")
    viewers = (gate.ANONYMOUS, gate.Viewer(user_id=owner.pk), gate.Viewer(user_id=1, staff=True))
    for viewer in viewers:
        for narrowed in (
            gate.agents(viewer),
            gate.agents(viewer, include_gone=False).filter(name__icontains="a"),
            filters.apply(gate.agents(viewer), {"tags": ["weather"]}),
            gate.agents(viewer).filter(skills__name__icontains="e").distinct(),  # a join
            gate.agents(viewer).none(),
        ):
            for need in needs:
                terms = [f"'{lexeme}'" for lexeme in lexical._lexemes(need)]
                for wanted, limit, every in ((ids, 100, True), (ids, 0, True), ([], 5, False)):
                    got = lexical.word_shares(need, narrowed, wanted, limit, every=every)
                    expected = lexical._lexical_queryset(
                        narrowed, terms, wanted, limit, every=every
                    )
                    assert got == expected, (viewer, need, str(narrowed.query))
    # The owner sees their pending agent, the others do not.
    need = "weather forecast for tomorrow"
    assert hidden.pk in lexical.word_shares(need, gate.agents(viewers[1]), ids, 0)
    assert hidden.pk not in lexical.word_shares(need, gate.agents(gate.ANONYMOUS), ids, 0)
    assert lexical._condition_of(gate.agents().filter(skills__name="x")) is None


@needs_model
@pytest.mark.parametrize(
    ("scan_max", "path"),
    [(100, "exact"), (3, "counted, then widened"), (2, "widened")],
)
def test_filters_that_drop_the_nearest_agents(
    scan_max: int, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The filters leave out the nearest agents: the ones they keep are scored exactly when
    PostgreSQL counts at most SCAN_MAX of them, else the graph is asked for more candidates
    (the ids of a large filtered set are never read); the same answer either way."""
    topics = (
        "weather forecasts and rain radar",
        "rain forecasts for farmers",
        "tomorrow's weather in your town",
        "umbrella advice when rain is coming",
        "storm warnings and rainfall totals",
        "weather for sailors: rain and wind",
        "chess puzzles",
        "poetry in French",
    )
    made = [
        agent_from_card(
            minimal_card(name=f"Agent {n}", description=topic.capitalize() + "."),
            url=f"https://{n}.filters.example/.well-known/agent-card.json",
        )
        for n, topic in enumerate(topics)
    ]
    store.embed_agents([agent.pk for agent in made])
    need = "will it rain tomorrow"
    nearest = vectors.index().candidates(model.embed_query(need), 3)
    kept = gate.agents(include_gone=False).exclude(pk__in=nearest)
    assert kept.count() == 5
    monkeypatch.setattr(semantic, "NEAREST_MIN", 2)  # a page of 1: 3 candidates
    monkeypatch.setattr(semantic, "SCAN_MAX", scan_max)
    scanned: list[int] = []
    asked: list[int] = []
    similarities, candidates = vectors.VectorIndex.similarities, vectors.VectorIndex.candidates

    def scan(self: Any, query: Any, ids: Any) -> Any:
        ids = list(ids)
        scanned.append(len(ids))
        return similarities(self, query, ids)

    def ask(self: Any, query: Any, count: int, **options: Any) -> Any:
        asked.append(count)
        return candidates(self, query, count, **options)

    monkeypatch.setattr(vectors.VectorIndex, "similarities", scan)
    monkeypatch.setattr(vectors.VectorIndex, "candidates", ask)
    found = semantic.rank(need, kept, limit=1)
    if path == "exact":
        assert scanned == [5] and asked == [3]
    else:  # three times the candidates: one in three of the nearest was kept (at least)
        assert scanned == [] and asked == [3, 9]
    # The page of 5 asks for every agent (no widening): the first of it comes first.
    everyone = semantic.rank(need, kept, limit=5)
    assert len(everyone) >= 2 and found == everyone[:1]
