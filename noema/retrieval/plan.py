"""Choosing and ordering the facts of a retrieval: the packing order, with the reason for each.

Two strategies (``RetrieveOptions.seeds``):

``"vector"``, the original three steps
    The ``top_k`` facts nearest the question are the seeds; a breadth-first walk
    (:mod:`noema.retrieval.walk`) follows up to ``hops`` edges from their entities; seeds come
    first, then the walked facts by distance from a seed, ties to the fact more similar to the
    question, then to graph order.

``"graph"`` (the default)
    Seeds come from three searches: the fact vectors (``top_k`` hits, as above), the vectors of
    the sentences facts came from (see :mod:`noema.vectors.sentences`) and, over the same
    sentences, BM25 on the question's words (:mod:`noema.retrieval.lexical`: a rare name or number
    the embedding misses), the two sentence rankings fused by rank behind the two best sentences
    by vector. Sentences are taken best first,
    each bringing its facts (most similar to the question first). Right after each of the best
    few, a *narrow hop*: an entity of that sentence that another document is about brings that
    document's sentences most similar to the question, which is how the second paragraph of a
    bridge question ("the company that acquired X") is reached. The fact seeds follow the first
    sentences. After the first few units, *bridge searches* (see :mod:`noema.retrieval.bridges`): what
    the question asks beyond what the evidence says, with a bridge entity of each of the best
    sentences, their sentences taken in turn with the rest of the first search's. A third step
    goes from each such search's best sentence through the graph, not through the embedding
    model: the sentences of the documents its bridge entity is about (or, when none is, the
    sentences that mention it), ranked by the vector of the search that led there. A bridge
    whose own facts answer a further relation the question asks (the chief executive of the
    company the second step reached) leads at once to that fact's sentence and that entity's
    sentences, beside its own search (see :func:`noema.retrieval.bridges.chained_bridge`). In
    ``notation`` and ``natural_language`` a sentence's facts past the first five wait until
    every search's sentences are in. The walk of ``hops`` edges as above comes last.

Dates, amounts and descriptions ("American rock band") are never walked or hopped through: a
year or a description shared by unrelated facts would join them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal

from noema.model.facttext import fact_text
from noema.model.graph import SemanticGraph
from noema.model.names import normalize_name
from noema.model.spans import Sentence, sentence_text
from noema.retrieval.bridges import (
    answers_asked,
    asked_stems,
    bridge_entity,
    bridge_query,
    chained_bridge,
    entities_of,
    predicate_of,
    question_names,
    question_words,
    relation_bridge,
    relation_words,
    walkable,
)
from noema.retrieval.filters import FactFilter
from noema.retrieval.lexical import LexicalIndex, fused
from noema.retrieval.steps import Reason, Step
from noema.retrieval.timeorder import latest_holder
from noema.retrieval.times import read_question_time
from noema.retrieval.walk import best_sentences, fact_similarities, mentioned_sentences, walk
from noema.vectors.embed import Vectors
from noema.vectors.index import VectorIndex
from noema.vectors.sentences import SentenceIndex

__all__ = ["Step", "plan_graph", "plan_vector"]

# How many of the best sentences hop to the documents their entities are about, and how many of
# each such document's sentences come in (measured on HotpotQA and MuSiQue; see the README).
HOP_FROM = 3
HOP_SENTENCES = 2
# Sentences searched: enough to fill a few hundred tokens several times over.
SENTENCE_CANDIDATES = 40
# Fact seeds are placed after this many sentence units: the sentence vectors rank better than
# the fact vectors, but the facts that match directly stay near the front.
FACT_SEEDS_AFTER = 2
# Bridge searches: the units of the first search kept before any bridge (for the source
# sentences; facts written as facts keep one more: a bridge sentence brings up to five facts),
# how many of the best sentences give a bridge, and the steps in all (the first search is 1).
KEEP_FIRST = 2
KEEP_FIRST_FACTS = 3
BRIDGE_FROM = 2
BRIDGE_STEPS = 3
# In notation and natural_language a sentence shows as its facts, not as itself, and some
# sentences bring ten or more; the facts of a sentence past this many (the least similar to the
# question) wait until the searches' sentences are in, so the budget reaches more sentences.
FACTS_PER_SENTENCE = 5
# With the lexical search, the two best sentences by vector stay first and the rest of both
# rankings follow fused by rank. Measured on both halves of HotpotQA and MuSiQue and on the
# corpora (benchmarks/HISTORY.md): with one kept, MuSiQue at 100 tokens lost 2 to 6 points,
# its second sentence by vector giving way to one that only shares the question's words.
VECTOR_FIRST = 2


def plan_vector(
    graph: SemanticGraph,
    index: VectorIndex,
    sentences: SentenceIndex | None,
    q: Vectors,
    matches: Sequence[tuple[str, float]],
    hops: int,
    fact_filter: FactFilter | None,
) -> list[Step]:
    """The original three steps: vector seeds, then the walk (see the module docstring)."""
    chosen = {f for f, _ in matches}
    seeds = [(f, entities_of(graph, f)) for f, _ in matches]
    walked = [
        w
        for w in walk(graph, index, q, seeds, hops=hops, fact_filter=fact_filter)
        if w[0] not in chosen
    ]
    best = best_sentences(graph, sentences, [*chosen, *(w[0] for w in walked)], q)
    steps = [Step(f, "seed", s, f, 0, (), best.get(f)) for f, s in matches]
    for fact_id, distance, seed, path, similarity in walked:
        steps.append(
            Step(fact_id, "expansion", similarity, seed, distance, path, best.get(fact_id))
        )
    return steps


class _Planner:
    """Builds the ``"graph"`` order: keeps what is already chosen so nothing comes twice."""

    def __init__(
        self,
        graph: SemanticGraph,
        index: VectorIndex,
        sentences: SentenceIndex,
        q: Vectors,
        fact_filter: FactFilter | None,
        per_sentence: int | None = None,
    ) -> None:
        self.graph, self.index, self.sentences, self.q = graph, index, sentences, q
        self.fact_filter = fact_filter
        self.per_sentence = per_sentence
        self.steps: list[Step] = []
        self.emitted = 0  # how many of the steps the stream has yielded
        self.deferred: list[Step] = []  # a sentence's facts past per_sentence, for later
        self.chosen: set[str] = set()
        self.shown: set[Sentence] = set()
        self.hopped: set[str] = set()

    def allowed(self, fact_id: str) -> bool:
        return self.fact_filter is None or self.fact_filter.allows(self.graph, fact_id)

    def add_sentence(
        self,
        sentence: Sentence,
        similarity: float,
        reason: Reason,
        seed: str | None = None,
        path: tuple[str, ...] = (),
        step: int = 1,
    ) -> list[str]:
        """The sentence's allowed facts, most similar first; returns those added (the ones
        past ``per_sentence`` wait in :attr:`deferred` but are returned too: they are the
        sentence's evidence for hops and bridges)."""
        if sentence in self.shown:
            return []
        facts = [f for f in self.sentences.facts[sentence] if self.allowed(f)]
        if not facts:
            return []
        self.shown.add(sentence)
        scores = fact_similarities(self.index, facts, self.q)
        facts.sort(key=lambda f: -scores.get(f, -1.0))
        added: list[str] = []
        for fact_id in facts:
            if fact_id in self.chosen:
                continue
            self.chosen.add(fact_id)
            hops = 1 if reason == "hop" else 0
            chosen = Step(fact_id, reason, similarity, seed or fact_id, hops, path, sentence, step)
            if self.per_sentence is not None and len(added) >= self.per_sentence:
                self.deferred.append(chosen)
            else:
                self.steps.append(chosen)
            added.append(fact_id)
        return added

    def hop_from(self, facts: Sequence[str], home: str) -> Iterator[None]:
        """Documents about the entities of ``facts`` bring their best sentences in; yields
        after each sentence that added facts."""
        for fact_id in facts:
            for eid in entities_of(self.graph, fact_id):
                if not walkable(self.graph, eid):
                    continue
                for document_id in self.sentences.topics.get(eid, ()):
                    if document_id == home or document_id in self.hopped:
                        continue
                    self.hopped.add(document_id)
                    candidates = self.sentences.by_document.get(document_id, ())
                    scores = self.sentences.similarities(candidates, self.q)
                    best = sorted(candidates, key=lambda s: -scores[s])[:HOP_SENTENCES]
                    for sentence in best:
                        if self.add_sentence(sentence, scores[sentence], "hop", fact_id, (eid,)):
                            yield

    def add_fact(self, step: Step) -> bool:
        if step.fact_id in self.chosen:
            return False
        self.chosen.add(step.fact_id)
        self.steps.append(step)
        return True

    def add_walk(self, walk_from: set[Sentence], hops: int) -> None:
        """The facts the walk of ``hops`` edges crosses from the fact seeds and the facts of
        the sentences of ``walk_from``, those not chosen yet, after all others."""
        graph, q = self.graph, self.q
        seeds = [
            (step.fact_id, entities_of(graph, step.fact_id))
            for step in self.steps
            if step.reason == "seed" or (step.reason == "sentence" and step.sentence in walk_from)
        ]
        walked = [
            w
            for w in walk(graph, self.index, q, seeds, hops=hops, fact_filter=self.fact_filter)
            if w[0] not in self.chosen
        ]
        shown = best_sentences(graph, self.sentences, [w[0] for w in walked], q)
        for fact_id, distance, seed, path, similarity in walked:
            self.add_fact(
                Step(fact_id, "expansion", similarity, seed, distance, path, shown.get(fact_id))
            )

    def fresh(self) -> list[Step]:
        """The steps added since the last call: the stream yields each once."""
        fresh = self.steps[self.emitted :]
        self.emitted = len(self.steps)
        return fresh


def plan_graph(
    graph: SemanticGraph,
    index: VectorIndex,
    sentences: SentenceIndex,
    q: Vectors,
    matches: Sequence[tuple[str, float]],
    hops: int,
    fact_filter: FactFilter | None,
    min_similarity: float | None = None,
    *,
    question: str = "",
    embed: Callable[[Sequence[str]], Vectors] | None = None,
    lexical: LexicalIndex | None = None,
    steps: int | None = None,
    keep_first: int | None = None,
    per_sentence: int | None = None,
    timed: bool = False,
) -> Iterator[Step]:
    """Sentence seeds with narrow hops, bridge searches, the fact seeds, then the walk (see the
    module docstring). ``timed``: the call gives a date (``as_of``), so a role's bridge is its
    holder then, not the one now.

    Steps come lazily: packing stops at the budget, so the bridge searches run only when the
    budget reaches past the first sentences, and the walk, the costly part, only past all of
    them. Without ``embed`` (or with ``steps=1`` or ``hops=0``) there are no bridge searches;
    without ``lexical`` the first search is by vector alone.
    ``keep_first`` units (sentences or fact seeds) of the first search come before any bridge.
    With ``per_sentence``, a sentence's facts past that many come after every search's
    sentences, before the walk."""
    steps = BRIDGE_STEPS if steps is None else steps
    keep_first = KEEP_FIRST if keep_first is None else keep_first
    planner = _Planner(graph, index, sentences, q, fact_filter, per_sentence)
    hits = sentences.search(q, SENTENCE_CANDIDATES)
    if lexical is not None and question:
        hits = first_hits(sentences, q, hits, lexical.search(question, SENTENCE_CANDIDATES))
    if min_similarity is not None:
        hits = [(s, score) for s, score in hits if score >= min_similarity]
    best: list[tuple[Sentence, list[str]]] = []  # the first search's sentences and their facts
    first = _first_search(planner, hits, _fact_seeds(graph, sentences, matches, q), hops, best)
    for kept, _ in enumerate(first, start=1):
        yield from planner.fresh()
        if kept == keep_first:
            break
    rotation: list[_Ranking] = [_Ranking(first, 1, q)]
    bridges = None
    if embed is not None and steps > 1 and question and hops > 0:  # hops=0: the evidence only
        bridges = _Bridges(planner, question, embed, min_similarity, chain=steps > 2, timed=timed)
        # from the question's best sentences, whether or not the stream has reached them
        opening = [
            (s, [f for f in planner.sentences.facts[s] if planner.allowed(f)]) for s, _ in hits
        ]
        opening = [(s, facts) for s, facts in opening if facts]
        rotation += bridges.search(
            [(s, facts, q) for s, facts in opening[:BRIDGE_FROM]],
            step=2,
            first=bridges.by_relation([f for _, facts in opening for f in facts], q),
        )
    yield from _in_turn(planner, rotation, bridges, steps)
    planner.steps.extend(planner.deferred)  # chosen already: the walk does not bring them
    # the walk starts from the fact seeds and the facts of as many of the best sentences
    planner.add_walk({s for s, _ in best[: len(matches)]}, hops)
    yield from planner.fresh()


def first_hits(
    sentences: SentenceIndex,
    q: Vectors,
    dense: Sequence[tuple[Sentence, float]],
    lexical: Sequence[tuple[Sentence, float]] | None,
) -> list[tuple[Sentence, float]]:
    """The first search's sentences: the vector search's (``dense``), or with the lexical
    search's hits the best of ``dense`` first and then both by reciprocal rank, each with its
    similarity to ``q`` (a sentence only the words found is compared with ``q`` here)."""
    if lexical is None:
        return list(dense)
    kept = [s for s, _ in dense[:VECTOR_FIRST]]
    order = fused([s for s, _ in dense], [s for s, _ in lexical])
    order = list(dict.fromkeys([*kept, *order]))[:SENTENCE_CANDIDATES]
    similarity = dict(dense)
    missing = [s for s in order if s not in similarity]
    similarity.update(sentences.similarities(missing, q))
    return [(s, similarity[s]) for s in order]


def _in_turn(
    planner: _Planner, rotation: list[_Ranking], bridges: _Bridges | None, steps: int
) -> Iterator[Step]:
    """One unit from each search of ``rotation`` in turn until all are used up; the best
    sentence of a bridge search gives the bridge of the next step, up to ``steps``."""
    while rotation:
        following: dict[int, list[tuple[Sentence, list[str], Vectors]]] = {}
        for ranking in list(rotation):
            unit = ranking.next_unit()
            if unit is False:
                rotation.remove(ranking)
                continue
            if isinstance(unit, tuple) and ranking.units == 1 and ranking.step < steps:
                following.setdefault(ranking.step + 1, []).append((*unit, ranking.vector))
            yield from planner.fresh()
        if bridges is not None:
            for step, openings in following.items():
                rotation += bridges.search(openings, step=step)


def _fact_seeds(
    graph: SemanticGraph,
    sentences: SentenceIndex,
    matches: Sequence[tuple[str, float]],
    q: Vectors,
) -> list[Step]:
    seed_sentences = best_sentences(graph, sentences, [f for f, _ in matches], q)
    return [Step(f, "seed", s, f, 0, (), seed_sentences.get(f)) for f, s in matches]


def _first_search(
    planner: _Planner,
    hits: Sequence[tuple[Sentence, float]],
    fact_seeds: Sequence[Step],
    hops: int,
    best: list[tuple[Sentence, list[str]]],
) -> Iterator[None]:
    """Step 1: the question's sentences best first, a narrow hop after each of the first
    ``HOP_FROM``, the fact seeds after ``FACT_SEEDS_AFTER``; yields after each sentence or
    fact seed added, and appends each sentence of the search with its facts to ``best``."""
    for sentence, score in hits:
        if len(best) == FACT_SEEDS_AFTER:
            for step in fact_seeds:
                if planner.add_fact(step):
                    yield
        added = planner.add_sentence(sentence, score, "sentence")
        if not added:
            continue
        best.append((sentence, added))
        yield
        if hops > 0 and len(best) <= HOP_FROM:
            yield from planner.hop_from(added, sentence.document_id)
    for step in fact_seeds:  # fewer sentence units than FACT_SEEDS_AFTER
        if planner.add_fact(step):
            yield


class _Ranking:
    """One search of the rotation, taken a unit (a sentence's facts, or a fact) at a time."""

    def __init__(
        self, units: Iterator[tuple[Sentence, list[str]] | None], step: int, vector: Vectors
    ) -> None:
        self.source, self.step, self.units = units, step, 0
        self.vector = vector  # what the search ranks by: a further step from it ranks by it too

    def next_unit(self) -> tuple[Sentence, list[str]] | None | Literal[False]:
        """The next unit (a sentence and its facts, or ``None`` for a unit without one);
        ``False`` once the search is used up."""
        for unit in self.source:
            self.units += 1
            return unit
        return False


# Words that set a question's time by something other than a date ("before Oswin Petrakis",
# "the first chair", "her predecessor"): its role's holder is not the one now.
_THEN_WORDS = frozenset(
    {"before", "after", "until", "first", "former", "formerly", "previous", "previously"}
    | {"predecessor", "earlier", "original", "originally", "once", "when", "while", "during"}
    | {"then"}
)


# A bridge taken: its entity, the fact it came from, the evidence that led to it, and the vector
# of the search that found that evidence.
_Chosen = tuple[str, str, str, Vectors]


class _Bridges:
    """Further searches from the question with the bridge entity of earlier evidence."""

    def __init__(
        self,
        planner: _Planner,
        question: str,
        embed: Callable[[Sequence[str]], Vectors],
        floor: float | None,
        *,
        chain: bool = False,
        timed: bool = False,
    ) -> None:
        self.planner, self.question, self.embed, self.floor = planner, question, embed, floor
        self.chain = chain  # whether a step-2 bridge may lead at once to a chained bridge
        self.words = question_words(question)
        self.names = question_names(question)
        self.used: set[str] = set()
        # "the chair of X" with no time asks of the chair now, not of the one a sentence names
        asked = read_question_time(question)
        # past the first word: "When was the chair of X born?" asks of the chair now
        self.now = (
            not timed
            and (asked is None or asked.kind == "current")
            and not (_THEN_WORDS & set(self.words.split()[1:]))
        )
        # a bridge search's sentence -> the evidence that led to that search
        self.evidence: dict[Sentence, str] = {}

    def by_relation(self, facts: Sequence[str], vector: Vectors) -> list[_Chosen]:
        """The relation bridge (see :func:`relation_bridge`) among the entities of ``facts``,
        with the text of the fact's sentence as its evidence: none, or one."""
        graph = self.planner.graph
        named = list(dict.fromkeys(e for f in facts for e in entities_of(graph, f)))
        sentences = self.planner.sentences
        found = relation_bridge(
            graph, named, self.words, self.used, sentences.topics, self.planner.allowed
        )
        if found is None:
            return []
        found = self._held_now(found)
        self.used.add(found[0])
        # what the fact says of the question, so the next search asks what is left: the
        # sentence, the fact in words (both names) and the question's words of its predicate
        predicate = predicate_of(graph, found[1])
        said = mentioned_sentences(graph, sentences, found[1])
        evidence = " ".join(
            [
                *(sentence_text(graph, s) for s in said[:1]),
                fact_text(graph, found[1]),
                *relation_words(self.question, predicate),
            ]
        )
        return [(*found, evidence, vector)]

    def search(
        self,
        units: Sequence[tuple[Sentence, list[str], Vectors]],
        step: int,
        first: Sequence[_Chosen] = (),
    ) -> list[_Ranking]:
        """One ranking per unit (a sentence, its facts and the vector of the search that found
        it) that names a bridge, after one per bridge of ``first``. Step 2 embeds its queries in
        one batch and searches with them in one pass; later steps go through the graph (see
        :meth:`_through_graph`)."""
        graph, sentences = self.planner.graph, self.planner.sentences
        chosen: list[_Chosen] = list(first)
        for sentence, facts, vector in units:
            found = bridge_entity(
                graph, facts, self.words, sentences.topics, self.used, names=self.names
            )
            if found is not None:
                found = self._held_now(found)
                self.used.add(found[0])
                # the evidence of this sentence and of the steps that led to it
                evidence = f"{self.evidence.get(sentence, '')} {sentence_text(graph, sentence)}"
                chosen.append((*found, evidence, vector))
        if not chosen:
            return []
        if step > 2:
            return [
                _Ranking(self._units(self._through_graph(e, v), step, e, f, ev), step, v)
                for e, f, ev, v in chosen
            ]
        chained = self._chained(chosen) if self.chain else [None] * len(chosen)
        links = [c for c in chained if c is not None]
        queries = [bridge_query(graph, self.question, e, ev) for e, _, ev, _ in chosen]
        queries += [bridge_query(graph, self.question, e, ev) for e, _, ev, _ in links]
        vectors = self.embed(queries)
        found_hits = sentences.search_many(vectors[: len(chosen)], SENTENCE_CANDIDATES)
        rankings = []
        link_vectors = iter(vectors[len(chosen) :])
        for (e, f, ev, _), vector, hits, link in zip(
            chosen, vectors[: len(chosen)], found_hits, chained, strict=True
        ):
            rankings.append(_Ranking(self._units(hits, step, e, f, ev), step, vector))
            if link is not None:  # right after the search it follows from
                rankings.append(self._chain_ranking(link, next(link_vectors), step + 1))
        return rankings

    def _held_now(self, found: tuple[str, str]) -> tuple[str, str]:
        """The bridge a question with no time means: where ``found`` is the holder of a role
        another holds later ("Cecily Lanthorn chaired the foundation from 2009 until 2025"
        beside "Chair: Ngozi Ferrand (2025–)"), the later holder and the fact that says so (see
        :func:`noema.retrieval.timeorder.latest_holder`), unless taken or filtered out."""
        if not self.now:
            return found
        later = latest_holder(self.planner.graph, found[1], found[0])
        if later is None or later[0] in self.used or not self.planner.allowed(later[1]):
            return found
        return later

    def _chained(self, chosen: Sequence[_Chosen]) -> list[_Chosen | None]:
        """For each bridge of ``chosen``, its chained bridge (see :func:`chained_bridge`) with
        the evidence that leads there: the bridge's and the chained fact's first sentence."""
        graph, sentences = self.planner.graph, self.planner.sentences
        out: list[_Chosen | None] = []
        for entity_id, _, evidence, vector in chosen:
            found = chained_bridge(
                graph,
                entity_id,
                self.words,
                normalize_name(evidence),
                self.used,
                sentences.topics,
                self.planner.allowed,
            )
            if found is None:
                out.append(None)
                continue
            self.used.add(found[0])
            said = mentioned_sentences(graph, sentences, found[1])[:1]
            text = " ".join([evidence, *(sentence_text(graph, s) for s in said)])
            out.append((*found, text, vector))
        return out

    def _chain_ranking(self, link: _Chosen, vector: Vectors, step: int) -> _Ranking:
        """The chained fact's sentence, then the chained bridge's sentences through the graph
        (as a step past the second goes), ranked by the query for what is left to ask of it."""
        entity_id, fact_id, evidence, _ = link
        sentences = self.planner.sentences
        said = mentioned_sentences(self.planner.graph, sentences, fact_id)[:1]
        hits = [
            *sentences.similarities(said, vector).items(),
            *self._through_graph(entity_id, vector),
        ]
        return _Ranking(self._units(hits, step, entity_id, fact_id, evidence), step, vector)

    def _through_graph(self, entity_id: str, vector: Vectors) -> list[tuple[Sentence, float]]:
        """A further step without another query embedding (measured: answer recall within a
        question or two per cell of an embedded third query on both benchmarks, and a quarter
        off the query time; README, Query time): the sentences of the documents the bridge
        entity is about, else the sentences that mention it, ranked by
        ``vector``, the query that found the sentence naming the bridge (the question's words
        that are left to answer, as near as the earlier step had them)."""
        graph, sentences = self.planner.graph, self.planner.sentences
        candidates = [
            s for d in sentences.topics.get(entity_id, ()) for s in sentences.by_document.get(d, ())
        ]
        if not candidates:
            candidates = [
                s
                for f in graph.facts_of(entity_id)
                for s in mentioned_sentences(graph, sentences, f)
            ]
        scores = sentences.similarities(dict.fromkeys(candidates), vector)
        ranked = sorted(scores.items(), key=lambda pair: -pair[1])
        return ranked[:SENTENCE_CANDIDATES]

    def _units(
        self,
        hits: Sequence[tuple[Sentence, float]],
        step: int,
        entity_id: str,
        fact_id: str,
        evidence: str,
    ) -> Iterator[tuple[Sentence, list[str]]]:
        if self.floor is not None:  # the floor is on similarity to the question itself
            to_question = self.planner.sentences.similarities([s for s, _ in hits], self.planner.q)
            hits = [(s, score) for s, score in hits if to_question[s] >= self.floor]
        asked = asked_stems(self.words, normalize_name(evidence), self.names)
        if asked:
            # the best sentence holding the bridge's own fact of a relation the question asks
            # and the evidence does not say ("born" once the founder is named) first: the
            # step's vector ranks by the whole question, and the founder's other sentences took
            # the budget before it; one, as a performer's many "performed" sentences are not
            # all the answer
            graph, facts = self.planner.graph, self.planner.sentences.facts
            answer = next(
                (
                    i
                    for i, (sentence, _) in enumerate(hits)
                    if any(
                        answers_asked(graph, f, entity_id, asked) for f in facts.get(sentence, ())
                    )
                ),
                None,
            )
            if answer:
                hits = [hits[answer], *hits[:answer], *hits[answer + 1 :]]
        for sentence, score in hits:
            added = self.planner.add_sentence(
                sentence, score, "bridge", fact_id, (entity_id,), step
            )
            if added:
                self.evidence[sentence] = evidence
                yield sentence, added
