"""The command layer: one plain function per command and one table of the options they share.

Both entry points call these functions: the click commands in `atlas.cli` and the click-free
launcher in `atlas.launch` (which answers the start-up hot paths). A function takes the parsed
options and returns an `Answer`: the text for standard output, the text for standard error and
the exit code. Nothing here imports click, and the heavy modules are imported inside the
functions, so the launcher stays fast.

`OPTIONS` is the one description of an option: its flags, choices, default and environment
variable. The click decorators in `atlas.cli.common` are built from it and the launcher parses
with it, so an option changed here changes both (tests/test_commands.py compares them).
"""
from __future__ import annotations

import os
from typing import Any, NamedTuple

from .errors import NoMatch
from .output import format_result, terminal_safe, to_json


class Option(NamedTuple):
    """One command-line option: `flags` as click spells them, the parameter name, the choices
    (None: any value), the default, the environment variable that overrides the default, help."""

    flags: tuple[str, ...]
    dest: str
    choices: tuple[str, ...] | None
    default: str | None
    envvar: str | None
    help: str
    metavar: str | None = None
    folder: bool = False  # a directory path (click checks that it is not a file)
    number: type | None = None  # int or float, within `bounds` (None: unbounded on that side)
    bounds: tuple = (None, None)
    day: bool = False  # a calendar day, YYYY-MM-DD (`atlas.text.day` parses it)

    @property
    def long(self) -> str:
        return next(f for f in self.flags if f.startswith("--"))

    def convert(self, value: str):
        """The value as click passes it to the command; None when click would refuse it."""
        if self.choices and value not in self.choices:
            return None
        if self.day:
            from .text import day

            return day(value)
        if self.number is None:
            return value
        try:
            number = self.number(value)
        except ValueError:
            return None
        low, high = self.bounds
        if (low is not None and number < low) or (high is not None and number > high) or number != number:
            return None
        return number

    def value_from_env(self, environ=os.environ) -> str | None:
        """The default, or the environment variable's value when it is set (as click reads it)."""
        if self.envvar and environ.get(self.envvar):
            return environ[self.envvar]
        return self.default


OPTIONS = {o.dest: o for o in (
    Option(("--data",), "data_dir", None, None, None,
           "Data directory (default: $ATLAS_DATA, else the checkout's data/, else the user data directory's "
           "or the bundled atlas; see docs/folders.md).", folder=True),
    Option(("--format",), "fmt", ("text", "json"), "text", None,
           "Output format; json is stable (see docs/json.md)."),
    Option(("--lang",), "lang", ("en", "zh", "all"), "en", None, "Language of the explanations."),
    Option(("--sparql",), "sparql", None, None, None, "Run a read-only SPARQL query instead.", "QUERY"),
    Option(("--results",), "results", ("table", "json", "xml", "csv", "tsv"), None, None,
           "SPARQL result format: table, json (SPARQL 1.1 Results JSON; JSON-LD for CONSTRUCT/DESCRIBE), "
           "xml (SPARQL Results XML; RDF/XML for CONSTRUCT/DESCRIBE), csv or tsv (SPARQL 1.1 CSV/TSV, SELECT "
           "only). Default: table, or json with --format json."),
    Option(("--timeout",), "timeout", None, None, None,
           "Time limit of a SPARQL query (default: 5 s embedded, 10 s for a whole endpoint exchange).",
           "SECONDS", number=float, bounds=(0.1, 3600)),
    Option(("--max-rows",), "max_rows", None, None, None,
           "Result-size limit of an embedded SPARQL query, in rows or triples (default: 100000).",
           number=int, bounds=(1, None)),
    Option(("--repos",), "repos_dir", None, None, None,
           "Root of the local clones (default: $ATLAS_REPOS, else repos/ beside the data folder).", folder=True),
    Option(("--as-of",), "as_of", None, None, None,
           "Show the atlas as visible on DATE (YYYY-MM-DD, a UTC day).", "DATE", day=True),
    Option(("--hops",), "hops", None, "1", None,
           "How far the code index follows calls from the pinned files: 0 indexes the pinned files only, "
           "1 also the files that define what they call, and so on.", "N", number=int, bounds=(0, 4)),
)}

# The options each launcher hot path reads; any other word that starts with "-" goes to click.
FAST = {
    "query": ("lang", "fmt", "data_dir", "as_of"),
    "sparql": ("sparql", "results", "timeout", "max_rows", "fmt", "data_dir"),
    "refresh": ("data_dir", "repos_dir", "fmt"),
    "where": ("lang", "fmt", "data_dir", "repos_dir", "hops"),
    "source": ("lang", "fmt", "data_dir", "repos_dir", "hops"),
}


class Answer(NamedTuple):
    """What a command prints and how it ends."""

    out: str = ""
    err: str = ""
    code: int = 0


def answer(fmt: str, value, render, code: int = 0) -> Answer:
    """`value` as stable JSON, or `render(value)` as text."""
    return Answer(format_result(fmt, value, render), "", code)


def no_match(exc: NoMatch, fmt: str, lang: str) -> Answer:
    """A name that matched nothing: the closest records, as JSON on standard output or as text
    on standard error; exit code 1."""
    term = exc.term
    if fmt == "json":
        return Answer(to_json({"error": exc.message, "query": term, "suggestions": exc.rows}), "", 1)
    from .terminal import render

    return Answer("", terminal_safe(render.suggestions(term, exc.rows, lang, exc.message)), 1)


def show(term: str, lang: str = "en", fmt: str = "text", data_dir=None, as_of: str | None = None) -> Answer:
    """`atlas query WORDS`: the card of the one concept the words name; else the question read and
    answered (the answer first, then the ranked hits of one search over everything); else an honest
    miss with the nearest names (exit 1)."""
    from .terminal import render
    from .ask.answer import ask
    from .opened import Opened

    opened = Opened(data_dir)
    store = opened.cards
    symbols = _symbols_named(opened, store, term)  # a public API symbol's name: its symbol cards
    if symbols:
        return answer(fmt, symbols, render.symbol_cards)
    asked = ask(opened, term, as_of)
    if asked.kind == "card":
        return answer(fmt, asked.value, lambda d: render.card(d, store.questions, lang))
    if asked.kind == "answer":
        asked.value["hits"] = _with_code_hits(opened, term, asked.value["hits"])
        return answer(fmt, asked.value, lambda d: render.answer(d, store.questions, lang))
    code = _with_code_hits(opened, term, [])  # a line number or a function only the code tables know
    if code:
        said = asked.reading.lang if asked.reading is not None else "en"
        intent: dict[str, Any] = {"kind": "search", "question": None, "concepts": [], "lang": said}
        value: dict[str, Any] = {"query": term, "intent": intent, "answer": None, "hits": code}
        return answer(fmt, value, lambda d: render.answer(d, store.questions, lang))
    return missed(opened, term, asked.reading, fmt, lang)


def missed(opened, term: str, reading, fmt: str, lang: str) -> Answer:
    """Nothing in concepts, claims, flows or repositories matches: said in the query's language,
    with the concepts whose names are nearest; exit code 1."""
    from .terminal import render
    from .view.terms import nearest_names, prefix_owners_in
    from .ask.understand import language
    from .view.views import card_row

    store = opened.cards
    indexes = (store.names["name_index"], store.names["loose_index"])
    words = reading.plain if reading is not None and reading.plain else term
    rows = [card_row(store.card(i)) for i in nearest_names(*indexes, words)]
    several = len(prefix_owners_in(*indexes, term)) > 1
    said = language(term)
    if fmt == "json":
        return Answer(to_json({"error": render.miss_message(term, said, several), "query": term,
                               "suggestions": rows}), "", 1)
    return Answer("", terminal_safe(render.miss(term, rows, lang, said, several)), 1)


def _with_code_hits(opened, term: str, hits: list) -> list:
    """The search hits with what the code tables say of a line number, `file:line` or function
    name: first for a term shaped like code, after the search hits otherwise. The code table is
    only read when cached (a query never builds the code index)."""
    from .code.answers import code_shaped

    shape = code_shaped(term)
    if not shape:
        return hits
    from .code.answers import code_hits
    from .code.lookup import open_code, open_pins
    from .paths import repos_root

    pins = open_pins(opened.key, lambda: opened.atlas)
    code = open_code(opened.key, pins, repos_root(None, opened.data_dir), int(OPTIONS["hops"].value_from_env() or 1),
                     lambda: opened.atlas, build=False)
    found = code_hits(pins, code, term)
    return found + hits if found else hits


def _symbols_named(opened, store, term: str) -> dict | None:
    """The symbol cards of a term that names public API symbols (one identifier) and no concept: a
    concept's id, name or alias keeps its card, which shows the history of the symbols it names."""
    from .index.apistore import looks_like_symbol

    if not looks_like_symbol(term):
        return None
    if store.exact(term):
        return None  # a concept's name: its card, without opening the API store (nor, for a kept card, the index)
    api = opened.api
    found = api.lookup(term)
    return {"query": term, "symbols": [api.card(s) for s in found]} if found else None


def api(symbol: str | None = None, repo: str | None = None, since: str | None = None, diff=None,
        fmt: str = "text", data_dir=None) -> Answer:
    """`atlas api SYMBOL` (its cards), `atlas api --repo R` (the releases and counts), `--since TAG`
    (what was first released after it), `--diff A B` (added, removed and re-signed between two
    releases). A name, a repository or a release that matches nothing: exit 1 with the closest."""
    from .terminal import render
    from .opened import Opened

    opened = Opened(data_dir)
    if symbol:
        return _api_symbol(opened, symbol, fmt)
    store = opened.api
    surface = store.surface(repo or "")
    if surface is None:
        known = store.repos()
        return _api_miss(fmt, f"no API history for the repository {repo!r}",
                         "repositories with one: " + (", ".join(known) or "none (run `atlas refresh`)"))
    from .view import views

    base, symbols = store.base(surface.repo), store.symbols(surface.repo)
    if not since and not diff:
        return answer(fmt, views.api_summary(base, surface, symbols, store.surfaces(surface.repo)), render.api_summary)
    names = [since] if since else list(diff)
    named = [views.release_named(surface, n) for n in names]
    found = [r for r in named if r is not None]
    if len(found) < len(named):
        bad = next(n for n, r in zip(names, named) if r is None)
        return _api_miss(fmt, f"{surface.repo} has no release {bad!r}",
                         "its releases: " + (", ".join(r.name for r in surface.releases) or "none"))
    if since:
        return answer(fmt, views.api_since(base, surface, symbols, found[0]), render.api_since)
    return answer(fmt, views.api_diff(base, surface, symbols, found[0], found[1]), render.api_diff)


def _api_symbol(opened, term: str, fmt: str) -> Answer:
    from .terminal import render

    found = opened.api.lookup(term)
    if not found:
        close = opened.api.closest(term)
        return _api_miss(fmt, f"no public API symbol {term!r}", ("closest: " + ", ".join(close)) if close else
                         "symbols are read from the public headers of the repositories with `api:` (atlas refresh)")
    return answer(fmt, {"query": term, "symbols": [opened.api.card(s) for s in found]}, render.symbol_cards)


def _api_miss(fmt: str, message: str, hint: str) -> Answer:
    if fmt == "json":
        return Answer(to_json({"error": message, "hint": hint}), "", 1)
    return Answer("", terminal_safe(f"{message}\n{hint}"), 1)


def filter_concepts(words: list[str], lang: str = "en", fmt: str = "text", data_dir=None,
                    as_of: str | None = None) -> Answer:
    """`atlas query FILTER... [WORDS]` or `--search`: a table of the matching concepts (exit 1 if none)."""
    from .view import queries
    from .terminal import render

    atlas = _atlas(data_dir)
    filters, text = queries.parse_filters(words)
    rows = queries.search(atlas, filters, text, as_of)
    return answer(fmt, rows, lambda r: render.rows_table(r, lang), 0 if rows else 1)


def sparql_store(data_dir=None):
    """The embedded store of the data, open for reading (`atlas.linked.triplestore`): built or updated
    first when the data changed; N-Quads bytes (a store in memory) when the cache cannot hold one.
    Bad data raises, with every problem."""
    from .opened import Opened

    return Opened(data_dir).sparql_store()


def sparql_embedded(text: str, formats, data_dir=None, where: str = "query", limits: dict | None = None,
                    source=None, open_store=None):
    """`text` answered by the embedded store within the limits, rendered (`sparql.Rendered`): from
    `source`, else from `open_store()` (default: the data's store). A damaged store is dropped and
    built again, once."""
    from .linked import sparql, triplestore as sparqlstore

    limits = limits or {}
    open_store = open_store or (lambda: sparql_store(data_dir))
    sparql.guard(text, where)  # before any store is built for a query that will be refused
    for attempt in range(2):
        source = source if source is not None else open_store()
        try:
            return sparql.run_embedded(text, source, where=where, formats=formats,
                                       timeout=limits.get("timeout", sparql.QUERY_TIMEOUT),
                                       max_rows=limits.get("max_rows", sparql.MAX_ROWS))
        except sparql.StoreDamaged:
            if attempt or not isinstance(source, sparqlstore.Version):
                raise
            sparqlstore.discard(source)
            source = None
        finally:
            if isinstance(source, sparqlstore.Version):
                source.close()


def sparql_query(text: str, results: str, data_dir=None, endpoint: str | None = None, where: str = "query",
                 limits: dict | None = None, nt=None) -> Answer:
    """`atlas query --sparql Q`: the results over the embedded store (`nt`, else the data's) or an
    endpoint, within the limits (`timeout`, `max_rows`, `allow_service`). CSV and TSV end with
    their own line break (CRLF), so `out` never carries a final newline of its own."""
    from .linked import sparql
    from .errors import Location, UsageError

    limits = {k: v for k, v in (limits or {}).items() if v is not None}
    if endpoint:
        rendered = sparql.run_endpoint(text, endpoint, where=where, timeout=limits.get("timeout", sparql.TIMEOUT),
                                       allow_service=limits.get("allow_service", False), formats=results)
    else:
        if limits.get("allow_service"):
            raise UsageError("--allow-service needs --endpoint: the embedded store never follows SERVICE",
                             Location("--allow-service"))
        rendered = sparql_embedded(text, results, data_dir, where, limits, source=nt)
    out = terminal_safe(rendered.text)
    return Answer(out[:-1] if out.endswith("\n") else out)


def sparql_file(path) -> str:
    """The text of a query file (`--sparql-file`), read up to 1 MB (`/dev/zero` is refused, not
    read), or a located error."""
    from .linked.sparql import read_query_file

    return read_query_file(str(path))


def error_answer(exc) -> Answer:
    """What the click CLI prints for an `AtlasError` without problems (see atlas.cli.main): exit
    code 2 for a usage error, else 1."""
    from .errors import UsageError

    return Answer("", terminal_safe(f"Error: {exc}"), 2 if isinstance(exc, UsageError) else 1)


def sparql_results(results: str | None, fmt: str) -> str:
    """The SPARQL result format when --results is not given: follows --format."""
    return results or ("json" if fmt == "json" else "table")


def refresh(data_dir=None, repos_dir=None, fmt: str = "text", cutoff=None, repo_ids=(), concept_ids=(),
            clone=False, allow_shallow=False, progress=None, only_unchanged=False, fetch_missing=False,
            jobs=None, wait=False, clone_timeout=None) -> Answer | None:
    """`atlas refresh`: the harvest report. A run that changes nothing is remembered (the stamp)
    and answered from it until something changes. With `only_unchanged` (the launcher) nothing is
    harvested: None unless the stamp answers."""
    from .terminal import render
    from .harvest import stamp
    from .index.compiled import load_keyed
    from .paths import work_folders

    folders = work_folders(data_dir, repos_dir)  # outside a checkout: the user's copy, created on first use
    d = folders.data
    load, key = load_keyed(d, lazy=True)
    args = (key, folders.repos, cutoff, tuple(repo_ids), tuple(concept_ids), allow_shallow)
    report = None if (clone or fetch_missing) else stamp.check(d, *args)  # nothing changed since the last no-op?
    if report is None and only_unchanged:
        return None
    if report is None:
        from .harvest.refresh import refresh as run

        atlas = load()
        with _clones_stopped_on_signals(clone):
            report = run(atlas, d, repos_root=folders.repos, cutoff=cutoff or atlas.cutoff, repo_ids=tuple(repo_ids),
                         concept_ids=tuple(concept_ids), clone=clone, allow_shallow=allow_shallow, progress=progress,
                         fetch_missing=fetch_missing, jobs=jobs, wait=wait, state=(atlas.harvests, atlas.sightings),
                         clone_timeout=clone_timeout)
        stamp.remember(d, *args, atlas, report)
    plain = dict(report.to_plain(), folders=folders_plain(folders))
    done = answer(fmt, plain, lambda _o: render.refresh_table(report) + "\n" + folders_line(folders), report.exit_code)
    return done._replace(err=terminal_safe(folders.note)) if folders.note else done


def folders_plain(folders) -> dict:
    """The folders a command used, for its JSON: `{data, repos, origin}`."""
    return {"data": str(folders.data), "repos": str(folders.repos), "origin": folders.origin}


def folders_line(folders) -> str:
    """The summary line naming the folders a command used and why those."""
    from .paths import describe

    return f"data: {describe(folders.data, folders.origin)}; clones: {folders.repos}"


def _clones_stopped_on_signals(clone: bool):
    """With --clone, SIGTERM and Ctrl-C stop the running git clones and remove their partial folders."""
    import contextlib

    if not clone:
        return contextlib.nullcontext()
    from .harvest.clone import stopped_on_signals

    return stopped_on_signals()


# ---------------------------------------------------------------------------------------------
# Commands over a loaded atlas: the value (shared with the MCP server) and the printed answer
# ---------------------------------------------------------------------------------------------

def _atlas(data_dir):
    from .opened import Opened

    return Opened(data_dir).atlas


def _or_no_match(fmt: str, lang: str, build) -> Answer:
    """`build()`, or the closest concepts when a name in it matched none."""
    try:
        return build()
    except NoMatch as exc:
        return no_match(exc, fmt, lang)


def related_value(atlas, term: str, rel: str | None = None, depth: int = 1) -> dict:
    from .view import queries, terms as resolve

    c = resolve.concept(atlas, term)
    return {"id": c.id, "related": queries.related(atlas, c, rel, depth)}


def related(term: str, rel=None, depth: int = 1, lang: str = "en", fmt: str = "text", data_dir=None) -> Answer:
    """`atlas related TERM`: concepts related to TERM in both directions, up to `depth` hops."""
    from .terminal import render

    def build():
        value = related_value(_atlas(data_dir), term, rel, depth)
        return answer(fmt, value, lambda d: render.related({"id": d["id"]}, d["related"], lang))
    return _or_no_match(fmt, lang, build)


def path_value(atlas, a: str, b: str, rel: str | None = None) -> dict:
    from .view import queries, terms as resolve

    ca, cb = resolve.concept(atlas, a), resolve.concept(atlas, b)
    return {"from": ca.id, "to": cb.id, "steps": queries.path(atlas, ca, cb, rel)}


def path(a: str, b: str, rel=None, fmt: str = "text", data_dir=None) -> Answer:
    """`atlas path A B`: the shortest typed path (exit 1 when there is none)."""
    from .terminal import render

    def build():
        value = path_value(_atlas(data_dir), a, b, rel)
        code = 1 if not value["steps"] and value["from"] != value["to"] else 0
        return answer(fmt, value, lambda d: render.path(d["from"], d["to"], d["steps"]), code)
    return _or_no_match(fmt, "en", build)


def questions(terms=(), show_answers: bool = False, lang: str = "en", fmt: str = "text", data_dir=None) -> Answer:
    """`atlas questions [TERMS]`: the six-question matrix."""
    from .view import queries, terms as resolve
    from .terminal import render

    def build():
        atlas = _atlas(data_dir)
        result = queries.questions(atlas, resolve.concepts(atlas, terms) or None)
        return answer(fmt, result, lambda r: render.questions(r, lang, show_answers or bool(terms)))
    return _or_no_match(fmt, lang, build)


def compare_value(atlas, terms) -> dict:
    from .view import queries, terms as resolve

    return queries.compare(atlas, resolve.concepts(atlas, terms))


def compare(terms, lang: str = "en", fmt: str = "text", data_dir=None) -> Answer:
    """`atlas compare A B ...`: concepts side by side (a concept named twice is shown once)."""
    from .terminal import render

    return _or_no_match(fmt, lang, lambda: answer(fmt, compare_value(_atlas(data_dir), terms),
                                                  lambda r: render.compare(r, lang)))


def flow(name: str | None = None, lang: str = "en", fmt: str = "text", data_dir=None) -> Answer:
    """`atlas flow [NAME]`: the flows, or one as ordered steps."""
    from .view import queries
    from .terminal import render
    from .opened import Opened

    opened = Opened(data_dir)
    if name is None:
        return answer(fmt, queries.flows(opened.atlas), lambda r: render.flows(r, lang))
    return answer(fmt, flow_value(opened, name), lambda r: render.flow(r, lang))


def flow_value(opened, name: str):
    """The flow a name names; on a miss the error names the closest flows (the ranked search)."""
    from .view import queries, terms as resolve

    if resolve.flow(opened.atlas, name) is None:
        return queries.flow(opened.atlas, name, opened.index)
    return queries.flow(opened.atlas, name)


def claims(topic: str | None = None, status=None, lang: str = "en", fmt: str = "text", data_dir=None,
           full: bool = False) -> Answer:
    """`atlas claims [TOPIC]`: every claim, one line each, grouped by status with counts (`full`:
    with the evidence); or the claims for a topic, ranked, with their evidence (exit 1 when none)."""
    from .terminal import render
    from .opened import Opened

    rows = claims_value(Opened(data_dir), topic, status)
    if topic is not None and not rows and fmt != "json":
        return Answer("", f'no claims match "{topic}"' + (f" with status {status}" if status else ""), 1)
    show = render.claims if topic is not None or full else render.claims_by_status
    return answer(fmt, rows, lambda r: show(r, lang), 0 if rows or topic is None else 1)


def claims_value(opened, topic: str | None = None, status=None) -> list:
    """Every claim (with a status: those), or the claims for a topic, ranked."""
    from .view import queries

    if not topic:
        return queries.claims(opened.atlas, None, status)
    return queries.claims_topic(opened.atlas, opened.index, topic, status)


def repo(ident: str | None = None, lang: str = "en", fmt: str = "text", data_dir=None) -> Answer:
    """`atlas repo [ID]`: the repositories, or one with its harvest."""
    from .view import queries, terms as resolve, views
    from .terminal import render
    from .opened import Opened

    opened = Opened(data_dir)
    if not ident:
        return answer(fmt, queries.repos(opened.atlas), lambda r: render.repos(r, lang))
    r = resolve.repository(opened.atlas, ident)
    if r is None:
        raise _no_repo(opened, ident)
    return answer(fmt, views.repo(opened.atlas, r), lambda d: render.repo(d, lang))


def _no_repo(opened, ident: str):
    from .errors import AtlasError, Location
    from .text import suggest

    atlas = opened.atlas
    close = [h["id"] for h in opened.index.search(ident, types={"repo"}, limit=5)]
    close += [x for x in suggest(ident, {r.id: r.id for r in atlas.repositories}, 5) if x not in close]
    named = [x for x in atlas.repositories if x.id.lower().split("/", 1)[-1] == ident.strip().lower()]
    message = f'several repositories are named "{ident}"' if len(named) > 1 else f'no repository "{ident}"'
    return AtlasError(message, Location("repo"),
                      ("closest: " + ", ".join(close[:5])) if close else "run `atlas repo` to list them")


# ---------------------------------------------------------------------------------------------
# validate, timeline, verify, map, export
# ---------------------------------------------------------------------------------------------

def validate_problems(data_dir=None, shacl: bool = True):
    """`atlas validate`'s findings: (the loaded data, every problem). The YAML stage (files, fields,
    cross-record checks) reports what it finds; the SHACL stage then runs over whatever loaded, also
    when the YAML stage found errors, and its violations follow."""
    from .index.compiled import validate as load_and_check

    loaded = load_and_check(data_dir)
    problems = list(loaded.problems)
    if shacl:
        from .linked.shacl import shacl_problems

        problems.extend(shacl_problems(loaded))
    return loaded, problems


def validate(data_dir=None, fmt: str = "text", shacl: bool = True, fail_on_warnings: bool = False) -> Answer:
    """`atlas validate`: every problem of data/ as file:line:col; exit 1 with errors (or warnings
    with `fail_on_warnings`)."""
    from .terminal import render
    from .paths import choose_data, describe

    chosen = choose_data(data_dir)
    loaded, problems = validate_problems(chosen.path, shacl)
    errors = sum(1 for p in problems if p.is_error)
    value = {"errors": errors, "warnings": len(problems) - errors, "data": str(chosen.path), "problems": [
        {"file": p.location.file, "line": p.location.line, "col": p.location.col,
         "level": p.level, "code": p.code, "message": p.message, "hint": p.hint} for p in problems]}
    code = 1 if errors or (fail_on_warnings and problems) else 0
    summary = terminal_safe(f"data: {describe(*chosen)}")
    return answer(fmt, value, lambda _v: render.validation(problems, loaded.atlas) + "\n" + summary, code)


def timeline(term: str | None = None, repo_ids=(), as_of: str | None = None, fmt: str = "text",
             data_dir=None) -> Answer:
    """`atlas timeline [TERM]`: when each probe first became visible, oldest first."""
    from .view import queries
    from .terminal import render

    value = queries.timeline(_atlas(data_dir), term, tuple(repo_ids), as_of)
    return answer(fmt, value, render.timeline)


def repos_report(repo_ids=(), repos_dir=None, fmt: str = "text", data_dir=None) -> Answer:
    """`atlas timeline --repos-report`: every listed repository, harvested or why not."""
    from .terminal import render
    from .harvest import account_repositories, account_undated
    from .paths import data_dir as resolve_data_dir, repos_root

    d = resolve_data_dir(data_dir)
    atlas = _atlas(d)
    accounts = account_repositories(atlas, repos_root(repos_dir, d))
    undated = account_undated(atlas, accounts)
    if repo_ids:
        accounts = [a for a in accounts if a.repo in repo_ids]
        undated = [u for u in undated if set(u.repos) & set(repo_ids)]
    counts: dict[str, int] = {}
    for a in accounts:
        counts[a.state] = counts.get(a.state, 0) + 1
    value = {"counts": counts, "repositories": [a.to_plain() for a in accounts],
             "undated": [u.to_plain() for u in undated]}
    return answer(fmt, value, render.repos_report)


def verify(repos_dir=None, fmt: str = "text", data_dir=None, every: bool = False) -> Answer:
    """`atlas verify`: every evidence pin against the local clones; exit 1 if one is broken. The text
    leads with the counts and the problems; `every` lists each unchecked pin too (JSON has them all)."""
    from .terminal import render
    from .harvest.verify import verify as run
    from .paths import work_folders

    folders = work_folders(data_dir, repos_dir)  # outside a checkout: the user's copy, created on first use
    report = run(_atlas(folders.data), repos_root=folders.repos)
    value = dict(report.to_plain(), folders=folders_plain(folders))
    done = answer(fmt, value, lambda _v: render.verify(report, every) + "\n" + folders_line(folders), report.exit_code)
    return done._replace(err=terminal_safe(folders.note)) if folders.note else done


def site(out_dir="site", as_of: str | None = None, force: bool = False, data_dir=None, repos_dir=None,
         hops: int = 1, base: str | None = None) -> Answer:
    """`atlas map`: write the site (with a page for each source file behind the pins when local
    clones are found); the answer names the folder, the first page and the source pages. With
    `base` (where the site will be served), each record's page names its IRI under it and has its
    Turtle beside it (`site.publish`)."""
    import os

    from .site import build_site
    from .site.common import SourceTables
    from .paths import choose_data, describe

    out_dir = os.path.abspath(out_dir)  # against the working directory, once, at the start
    if base is not None:
        from .linked.rdf import check_base

        check_base(base)
    chosen = choose_data(data_dir)
    from pathlib import Path

    from .site.owned import check_folder

    check_folder(Path(out_dir), force)  # a folder that is not the map's is refused before the code is indexed
    opened, pins, code, root = code_tables(chosen.path, repos_dir, hops)
    absent = [r for r in pins.pinned_repos() if code is None or r not in code.clones]
    api = [opened.api.page(r) for r in opened.api.repos()]
    published = None
    if base is not None:
        from .linked.rdf import build_graph, rebase

        published = (base, rebase(build_graph(opened.atlas, opened.data_dir / "ontology.ttl"), opened.atlas, base))
    paths = build_site(opened.atlas, out_dir, as_of=as_of, force=force, code=SourceTables(pins, code, absent),
                       api=api, published=published)
    plural = "s" if len(paths) != 1 else ""
    source = sum(1 for p in paths if "/source/" in p.as_posix())
    clones = (f"source pages: {source} (from {len(code.clones)} local clone(s) under {root})" if code is not None
              else f"source pages: none (no local clone of a pinned repository under {root}; "
                   "`atlas refresh --clone` brings them in, then `atlas map` adds the source behind the pins)")
    return Answer(terminal_safe(f"wrote {len(paths)} page{plural} to {out_dir.rstrip('/')}/ (open {paths[0]})\n"
                                f"{clones}\ndata: {describe(*chosen)}"))


def export(fmt: str = "ttl", output=None, to_endpoint: str | None = None, graph: str | None = None,
           data_dir=None, all_symbols: bool = False, base: str | None = None) -> Answer:
    """`atlas export`: the RDF on standard output, into a file (atomically) or into an endpoint. The
    graph holds every release and the API symbols concepts name; `all_symbols` adds every symbol of
    the API histories (about 4x the triples: see docs/benchmarks.md). The dataset's VoID description
    (licence, creator, version, counts, the store's named graphs) comes with it; `nq` and `trig`
    write the SPARQL store's named graphs (one per data file), the description in a graph of its own.
    With `base`, every concept, flow and repository IRI is its page's under `base` (`rdf.rebase`), as
    `atlas map --base` publishes them (ttl, jsonld and nt)."""
    from .errors import AtlasError, Location
    from .opened import Opened
    from .linked.rdf import build_graph, describe_dataset, serialize

    if output:
        output = _output_file(output)
    if to_endpoint:
        from .linked.sparql import check_url

        check_url(to_endpoint, "--to-endpoint")  # before the work of building the graph
    if base is not None:
        from .linked.rdf import check_base

        check_base(base)
        if fmt in QUAD_FORMATS:
            raise AtlasError(f"--base goes with ttl, jsonld or nt, not {fmt}", Location("--base"),
                             "the named graphs are the SPARQL store's, under the atlas's own IRIs")
    if all_symbols and fmt in QUAD_FORMATS:
        raise AtlasError(f"--all-symbols goes with ttl, jsonld or nt, not {fmt}", Location("--all-symbols"),
                         "the named graphs are the SPARQL store's, which holds the symbols concepts name")
    opened = Opened(data_dir)
    api = [(opened.api.surface(r), opened.api.symbols(r)) for r in opened.api.repos()] if all_symbols else None
    g = build_graph(opened.atlas, opened.data_dir / "ontology.ttl", api=api)
    quads, graphs = store_quads(opened)
    described = describe_dataset(g, graphs)
    if base is not None:
        from .linked.rdf import rebase

        g = rebase(g, opened.atlas, base)
    if to_endpoint:
        from .linked.sparql import load_endpoint

        status = load_endpoint(serialize(g + described, "nt"), to_endpoint, graph)
        return Answer(f"loaded {len(g) + len(described)} triples into {to_endpoint} (HTTP {status})")
    if fmt in QUAD_FORMATS:
        text, count = dataset_text(quads, described, fmt), len(quads.splitlines()) + len(described)
    else:
        text, count = serialize(g + described, fmt), len(g) + len(described)
    if not output:
        return Answer(text[:-1] if text.endswith("\n") else text)
    from .index.cache import atomic_write

    try:
        atomic_write(output, text)
    except OSError as exc:
        raise AtlasError(f"cannot write the export: {exc.strerror or exc}", Location(str(output))) from None
    return Answer("", terminal_safe(f"wrote {count} {'quads' if fmt in QUAD_FORMATS else 'triples'} to {output}"))


def dataset_description(data_dir=None):
    """The VoID description of the export (an rdflib graph), as `atlas export` writes it."""
    from .opened import Opened
    from .linked.rdf import build_graph, describe_dataset

    opened = Opened(data_dir)
    _quads, graphs = store_quads(opened)
    return describe_dataset(build_graph(opened.atlas, opened.data_dir / "ontology.ttl"), graphs)


QUAD_FORMATS = ("nq", "trig")
DATASET_GRAPH = "#dataset"  # the key of the graph that holds the dataset's description in nq and trig


def store_quads(opened) -> tuple[bytes, dict[str, int]]:
    """The SPARQL store's quads as N-Quads, and the triples in each of its named graphs."""
    import os

    import pyoxigraph as ox

    source = opened.sparql_store()
    if isinstance(source, (bytes, bytearray)):  # a cache that cannot hold a store: the quads themselves
        store = ox.Store()
        store.bulk_load(input=bytes(source), format=ox.RdfFormat.N_QUADS)
    else:
        with source:
            store = ox.Store()
            store.bulk_load(input=ox.Store.read_only(os.fspath(source)).dump(format=ox.RdfFormat.N_QUADS),
                            format=ox.RdfFormat.N_QUADS)
    rows = store.query("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g")
    graphs = {str(row["g"].value): int(row["n"].value) for row in rows}  # type: ignore[union-attr]
    return store.dump(format=ox.RdfFormat.N_QUADS) or b"", graphs


def dataset_text(quads: bytes, described, fmt: str) -> str:
    """N-Quads (sorted lines) or TriG (a block per graph, in order, its triples sorted) of the
    store's quads and the description, the latter in the graph `.../graph/%23dataset`."""
    from .linked.triplestore import graph_iri

    home = f" <{graph_iri(DATASET_GRAPH)}> ."
    lines = [line for line in quads.decode().splitlines() if line.strip()]
    lines += [line[:-2] + home for line in described.serialize(format="nt").splitlines() if line.strip()]
    lines.sort()
    if fmt == "nq":
        return "\n".join(lines) + "\n"
    blocks: dict[str, list[str]] = {}
    for line in lines:  # every quad is in a named graph; the graph IRI is the last term
        triple, name = line[:-2].rsplit(" <", 1)
        blocks.setdefault("<" + name, []).append(triple + " .")
    return "".join(f"{name} {{\n" + "".join(f"  {t}\n" for t in sorted(triples)) + "}\n\n"
                   for name, triples in sorted(blocks.items()))


def _output_file(output: str) -> str:
    """`-o FILE` made absolute against the working directory. Its folder must exist: like `cp` or a
    shell redirection, export creates no folders, so a mistyped path fails here instead of leaving a
    new tree of folders behind."""
    import os

    from .errors import AtlasError, Location

    path = os.path.abspath(output)
    folder = os.path.dirname(path)
    if os.path.lexists(folder) and not os.path.isdir(folder):
        raise AtlasError(f"cannot write the export: {folder} is not a folder", Location(output))
    if not os.path.isdir(folder):
        raise AtlasError(f"cannot write the export: the folder {folder} does not exist; export creates no "
                         "folders", Location(output), hint=f"create it first (mkdir -p {folder}), or write elsewhere")
    return path


# ---------------------------------------------------------------------------------------------
# The code behind the pins: where, source
# ---------------------------------------------------------------------------------------------

def _progress_to_stderr(message: str) -> None:
    """A note on a long job, on a terminal only (with the job's progress bar)."""
    import sys

    from .progress import active

    if active():
        sys.stderr.write(terminal_safe(message) + "\n")
        sys.stderr.flush()


def code_tables(data_dir=None, repos_dir=None, hops: int = 1, build: bool = True, progress=_progress_to_stderr):
    """(opened atlas, pin table, code table or None, clones folder): the two cached tables of
    atlas.code.lookup; the code table is built from the clones the first time it is needed."""
    from .code.lookup import open_code, open_pins
    from .opened import Opened
    from .paths import repos_root

    opened = Opened(data_dir)
    pins = open_pins(opened.key, lambda: opened.atlas)
    root = repos_root(repos_dir, opened.data_dir)
    code = open_code(opened.key, pins, root, int(hops), lambda: opened.atlas, build, progress)
    return opened, pins, code, root


def where(location: str, lang: str = "en", fmt: str = "text", data_dir=None, repos_dir=None,
          hops: int = 1) -> Answer:
    """`atlas where [REPO:]PATH:LINE`: the concepts, claims, flow steps and evidence whose pins cover
    the line, the function around it and the nearest pins; exit 1 when no pin covers it."""
    from .terminal import source as render_code
    from .code.answers import clones_view, parse_location, where as run

    wanted = parse_location(location)
    _opened, pins, code, root = code_tables(data_dir, repos_dir, hops)
    places = run(pins, code, wanted)
    repos = sorted({p["repo"] for p in places}) or ([wanted.repo] if wanted.repo else None)
    value: dict[str, Any] = {"query": dict(wanted._asdict()), "places": places,
                             "clones": clones_view(pins, code, root, repos)}
    if not places:
        _add_miss(value, pins, code, location, wanted)
    code_ = 0 if any(p["covering"] for p in places) else 1
    return answer(fmt, value, lambda v: render_code.where(v, lang), code_)


def _add_miss(value: dict, pins, code, term: str, wanted) -> None:
    """A lookup that matched no file: what it looked for and why (`code.answers.miss`); a clone
    cannot help a path outside every repository, so the clone hint is dropped then."""
    from .code.answers import miss

    value["miss"] = miss(pins, code, term, wanted)
    if value["miss"]["reason"] not in ("no-file", "unknown-repo"):
        value["clones"] = {**value["clones"], "absent": [], "hint": ""}


def source(targets, lang: str = "en", fmt: str = "text", data_dir=None, repos_dir=None, hops: int = 1,
           color: bool = False) -> Answer:
    """`atlas source PIN|CONCEPT|FLOW STEP|[REPO:]PATH:LINE`: the lines, numbered, with the function
    around them, its calls and its callers; exit 1 when no line could be shown."""
    from .terminal import source as render_code
    from .code.answers import clones_view, excerpts as read

    def build() -> Answer:
        opened, pins, code, root = code_tables(data_dir, repos_dir, hops)
        spans = _source_spans(opened, pins, code, list(targets))
        excerpts = read(pins, code, spans)
        value: dict[str, Any] = {"query": list(targets), "excerpts": excerpts,
                                 "clones": clones_view(pins, code, root, sorted({x["repo"] for x in excerpts}))}
        code_ = 0 if any(x["lines"] for x in excerpts) else 1
        if not excerpts:
            _add_miss(value, pins, code, targets[0], _location_or_none(targets[0]))
        if fmt == "json":
            return answer(fmt, value, render_code.source, code_)
        if not excerpts:  # nothing to show: said on standard error, as every miss is
            return Answer("", render_code.source(value, color, lang), code_)
        return Answer(render_code.source(value, color), "", code_)  # made safe inside, colours kept
    return _or_no_match(fmt, lang, build)


def _location_or_none(term: str):
    from .code.answers import parse_location
    from .errors import AtlasError

    try:
        return parse_location(term)
    except AtlasError:
        return None


def _source_spans(opened, pins, code, targets: list[str]):
    """What `atlas source` shows: a pin, a location, a flow's step (two words), a flow, a concept."""
    from .code.answers import location_span, parse_location, pin_span, spans_of
    from .errors import AtlasError, Location

    if not targets or len(targets) > 2:
        raise AtlasError("atlas source takes a pin, a concept, a location, or a flow and one of its steps",
                         Location("source"), "e.g. atlas source aiv-direct-drive; atlas source full-mesh-dispatch-path "
                         "wqe-write; atlas source dispatch.h:4166")
    if len(targets) == 2:
        flow_id = _flow_id(opened, pins, targets[0])
        step = _step_id(pins, flow_id, targets[1])
        spans = spans_of(pins, ("step", step, flow_id))
        if not spans:
            raise AtlasError(f"step {step} of flow {flow_id} has no pin", Location("source"),
                             f"atlas flow {flow_id} lists its steps and their sources")
        return spans
    term = targets[0]
    span = pin_span(pins, term)
    if span is not None:
        return [span]
    if ":" in term or "#L" in term:
        return location_span(pins, code, parse_location(term))
    return _named_spans(opened, pins, term)


def _named_spans(opened, pins, term: str):
    """A concept's pins, else a flow's (every step that has one)."""
    from .code.answers import spans_of
    from .errors import AtlasError, Location

    ident = opened.cards.find(term)
    if ident is None:
        flow_id = _flow_or_none(opened, pins, term)
        if flow_id is not None:
            return [s for step in pins.flows[flow_id][2] for s in spans_of(pins, ("step", step, flow_id))]
        ident = opened.concept(term).id  # or NoMatch with the closest concepts
    spans = spans_of(pins, ("concept", ident, ""))
    if not spans:
        raise AtlasError(f"concept {ident} has no pinned evidence", Location("source"))
    return spans


def _flow_or_none(opened, pins, name: str) -> str | None:
    from .view import terms as resolve

    if name in pins.flows:
        return name
    f = resolve.flow(opened.atlas, name)
    return f.id if f is not None else None


def _flow_id(opened, pins, name: str) -> str:
    found = _flow_or_none(opened, pins, name)
    if found is None:
        from .errors import AtlasError, Location
        from .view.terms import closest_flows

        close = closest_flows(opened.atlas, opened.index, name)
        raise AtlasError(f'no flow "{name}"', Location("source"),
                         ("closest: " + ", ".join(close)) if close else "run `atlas flow` to list them")
    return found


def _step_id(pins, flow_id: str, name: str) -> str:
    steps = pins.flows[flow_id][2]
    if name in steps:
        return name
    starts = [s for s in steps if s.startswith(name)]
    if len(starts) == 1:
        return starts[0]
    from .errors import AtlasError, Location

    raise AtlasError(f'flow {flow_id} has no step "{name}"', Location("source"), "its steps: " + ", ".join(steps))


# ---------------------------------------------------------------------------------------------
# atlas cache
# ---------------------------------------------------------------------------------------------

def cache(clear: bool = False, fmt: str = "text") -> Answer:
    """`atlas cache [--clear]`: the cache folder, its size and entries; --clear removes every
    entry no running process holds."""
    from .index.cache import report

    return answer(fmt, report(clear), _cache_text)


def _cache_text(value: dict) -> str:
    def size(n: int) -> str:
        return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n / 1024:.0f} KB"

    lines = []
    if "removed" in value:
        lines.append(f"removed {len(value['removed'])} entries"
                     + (f"; kept {len(value['kept'])} in use by a running process" if value["kept"] else ""))
    lines.append(f"{value['folder']}: {size(value['bytes'])} in {len(value['entries'])} entries "
                 f"(kept under {size(value['max_bytes'])}, the oldest removed first)")
    lines += [f"  {size(p['bytes']):>9}  {p['kind']}" + (f": {p['what']}" if p["what"] else "")
              for p in value["parts"]]
    lines.append("entries, newest use first:")
    for e in value["entries"]:
        lines.append(f"  {size(e['bytes']):>9}  {e['used'][:19].replace('T', ' ')}  {e['name']}"
                     + (f"  ({e['about']})" if e["about"] else ""))
    return terminal_safe("\n".join(lines))
