"""One command layer for both entry points: the click commands and the click-free launcher read the
same option table (atlas.commands.OPTIONS) and call the same command functions, so for any command
line they print the same bytes and end with the same exit code."""
from __future__ import annotations

import contextlib
import io

import click
from hypothesis import HealthCheck, given, settings, strategies as st

from atlas import commands, fastpaths, launch
from atlas.cli import COMMANDS, cli
from atlas.cli import main as click_main

FAST_COMMAND = {"query": "query", "sparql": "query", "refresh": "refresh", "where": "where", "source": "source"}


def _params(name: str) -> dict:
    return {p.name: p for p in cli.get_command(click.Context(cli), name).params}


def test_every_option_the_launcher_reads_is_clicks_option():
    for path, dests in commands.FAST.items():
        params = _params(FAST_COMMAND[path])
        for dest in dests:
            o, p = commands.OPTIONS[dest], params.get(dest)
            assert p is not None, f"the launcher reads {o.long} for `{path}`, click has no such option"
            assert tuple(p.opts) == o.flags, dest
            assert p.default == o.default, dest
            assert p.envvar == o.envvar, dest
            choices = tuple(p.type.choices) if isinstance(p.type, click.Choice) else None
            assert choices == o.choices, dest


# An option that shares a name with one of the table but means something else, with its reason.
OWN_OPTIONS = {("export", "fmt"): "--format of `atlas export` chooses an RDF serialisation"}


def test_every_click_option_named_in_the_table_is_built_from_it():
    for name in COMMANDS:
        for p in cli.get_command(click.Context(cli), name).params:
            o = commands.OPTIONS.get(p.name)
            if o is None or not isinstance(p, click.Option) or (name, p.name) in OWN_OPTIONS:
                continue
            assert tuple(p.opts) == o.flags, (name, p.name)
            choices = tuple(p.type.choices) if isinstance(p.type, click.Choice) else None
            assert (p.default, p.envvar, choices) == (o.default, o.envvar, o.choices), (name, p.name)
            assert p.type.name == _click_type(o).name, (name, p.name)


def _click_type(o: commands.Option):
    from atlas.cli.common import table_option

    return table_option(o.dest)(lambda **kw: None).__click_params__[0].type


def _run(main, argv):
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return out.getvalue(), err.getvalue(), code


def _printed(answer):
    return (answer.out + "\n" if answer.out else "", answer.err + "\n" if answer.err else "", answer.code)


WORDS = ["bus-x", "ｂｘ", "测试总线", "lib-s", "lib", "Unified", "test", "doorbell", "对称", "偏移", "collective",
         "library", "甲卡", "bux-x", "zzzq", "kind:library", "-s", "--", "--as-of", "2024-01-01"]
OPTS = [["--lang", v] for v in ("en", "zh", "all", "fr")] + [["--format", v] for v in ("text", "json", "yaml")] + \
    [["--lang"], ["--format"], ["--results", "csv"], ["--results", "json"], ["--timeout", "5"], ["--timeout", "x"],
     ["--max-rows", "0"], ["--max-rows", "1"],
     ["--sparql", "SELECT ?c WHERE { ?c atlas:answersQuestion question:link } ORDER BY ?c"], ["--sparql", "SELEC"]]


@st.composite
def query_argv(draw, data):
    parts = draw(st.lists(st.one_of(st.sampled_from(WORDS).map(lambda w: [w]), st.sampled_from(OPTS)),
                          max_size=5))
    at = draw(st.integers(0, len(parts)))
    parts.insert(at, ["--data", data])
    return ["query"] + [w for p in parts for w in p]


def test_launcher_and_click_print_the_same_for_random_command_lines(mini, monkeypatch):
    """Random `atlas query ...` lines (cards, searches, misses, filters, SPARQL, bad options) through
    the launcher and through click, in-process."""
    monkeypatch.setenv("COLUMNS", "100")
    fast_count = []

    # derandomized: the share of lines the launcher answers itself must not depend on the seed
    @settings(max_examples=80, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(query_argv(str(mini)))
    def check(argv):
        slow = _run(click_main, argv)
        assert _run(launch.main, argv) == slow, argv
        fast = fastpaths.answer(argv)
        if fast is not None:                   # the launcher answered without click
            fast_count.append(argv)
            assert _printed(fast) == slow, argv

    check()
    assert len(fast_count) >= 5, "the launcher seldom answered: the comparison was nearly vacuous"


def test_launcher_answers_cards_hits_and_misses_itself(mini):
    for argv, code in ((["query", "ｂｘ"], 0), (["query", "collective", "library", "--format", "json"], 0),
                       (["query", "buzz-x", "--lang", "zh"], 1), (["query", "buzz-x", "--format", "json"], 1),
                       (["query", "what", "is", "bus-x"], 0), (["query", "bux-x"], 0)):
        argv = [*argv, "--data", str(mini)]
        fast = fastpaths.answer(argv)
        assert fast is not None and fast.code == code, argv
        assert _printed(fast) == _run(click_main, argv), argv
    for argv in (["query", "kind:library"], ["query", "bus-x", "--lang", "fr"], ["query", "-s", "bus"],
                 ["query"], ["related", "bus-x"]):
        assert fastpaths.answer([*argv, "--data", str(mini)]) is None, argv


def test_an_environment_variable_in_the_table_reaches_both_paths(mini, monkeypatch):
    """An `envvar` added to an option of the table is read by click and by the launcher alike."""
    monkeypatch.setitem(commands.OPTIONS, "lang", commands.OPTIONS["lang"]._replace(envvar="ATLAS_TEST_LANG"))
    monkeypatch.setenv("ATLAS_TEST_LANG", "zh")
    argv = ["query", "bus-x", "--data", str(mini)]
    fast = fastpaths.answer(argv)
    assert fast is not None and "一条高速链路" in fast.out
    params = {o.long: o for o in commands.OPTIONS.values()}
    assert params["--lang"].value_from_env() == "zh"
