"""atlas.harvest.verify: evidence pins checked against real clones."""
from __future__ import annotations

from atlas.errors import Location
from atlas.harvest.verify import verify
from atlas.model.core import Atlas, Claim, Evidence, Pin, Repository, Text

from test_harvest import Repo, d


def _atlas(pins, branch=""):
    evidence = []
    for i, (pin, symbol) in enumerate(pins):
        evidence.append(Evidence(pin=Pin.parse(pin), symbol=symbol,
                                 loc=Location("data/claims/c.yaml", 10 + i, 7)))
    claim = Claim(id="c", statement=Text("s", "s"), status="confirmed", evidence=evidence)
    return Atlas(claims=[claim], repositories=[Repository(id="o/r", branch=branch)])


def _setup(tmp_path):
    r = Repo(tmp_path / "repos")
    c1 = r.commit({"src/a.c": "line one\nint hccs_link(void);\nline three\n"}, d(1))
    return r, c1


def test_verify_statuses(tmp_path):
    r, c1 = _setup(tmp_path)
    pins = [
        (f"o/r@{c1}:src/a.c#L2", "hccs_link"),  # ok
        (f"o/r@{'0' * 40}:src/a.c#L2", ""),  # a commit the clone does not have
        (f"o/r@{c1[:12]}:src/a.c#L2", ""),  # short sha
        (f"o/r@{c1}:src/missing.c#L1", ""),  # missing path
        (f"o/r@{c1}:src/a.c#L2-L9", ""),  # out of range
        (f"o/r@{c1}:src/a.c#L1-L2", "udma"),  # symbol not in lines
        (f"o/r@{c1}:src#L1", ""),  # a folder
    ]
    report = verify(_atlas(pins), repos_root=tmp_path / "repos")
    by = {r.location: r for r in report.rows}
    status = [by[f"data/claims/c.yaml:{10 + i}:7"].status for i in range(len(pins))]
    assert status == ["ok", "unchecked", "broken", "broken", "broken", "broken", "broken"]
    assert "not in the clone" in by["data/claims/c.yaml:11:7"].reason
    assert "out of range" in by["data/claims/c.yaml:14:7"].reason
    assert "udma" in by["data/claims/c.yaml:15:7"].reason
    assert report.exit_code == 1
    assert report.to_plain()["counts"] == {"ok": 1, "broken": 5, "stale": 0, "unchecked": 1}


def test_good_pin_passes_and_stale_when_head_changed(tmp_path):
    r, c1 = _setup(tmp_path)
    report = verify(_atlas([(f"o/r@{c1}:src/a.c#L2", "hccs_link")]), repos_root=tmp_path / "repos")
    assert [x.status for x in report.rows] == ["ok"] and report.exit_code == 0
    r.commit({"src/a.c": "line one\nint hccs_link2(void);\nline three\n"}, d(2))
    report = verify(_atlas([(f"o/r@{c1}:src/a.c#L2", "hccs_link"), (f"o/r@{c1}:src/a.c#L3", "")]),
                    repos_root=tmp_path / "repos")
    assert [x.status for x in report.rows] == ["stale", "ok"] and report.exit_code == 0


def test_unchecked_when_no_clone(tmp_path):
    (tmp_path / "repos").mkdir()
    report = verify(_atlas([(f"o/r@{'a' * 40}:x.c#L1", "")]), repos_root=tmp_path / "repos")
    assert [x.status for x in report.rows] == ["unchecked"]
    assert report.count("ok") == 0 and "no local clone" in report.rows[0].reason


def test_rows_come_by_file_then_line_number(tmp_path):
    """`:12` before `:100` (numbers, not text), and data/a.yaml before data/b.yaml."""
    r, c1 = _setup(tmp_path)
    places = [("data/b.yaml", 3), ("data/a.yaml", 100), ("data/a.yaml", 12), ("data/a.yaml", 9)]
    evidence = [Evidence(pin=Pin.parse(f"o/r@{c1}:src/a.c#L{2 if i % 2 else 9}"), symbol="",
                         loc=Location(file, line, 7)) for i, (file, line) in enumerate(places)]
    atlas = Atlas(claims=[Claim(id="c", statement=Text("s", "s"), status="confirmed", evidence=evidence)],
                  repositories=[Repository(id="o/r")])
    report = verify(atlas, repos_root=tmp_path / "repos")
    assert [x.location for x in report.rows] == ["data/a.yaml:9:7", "data/a.yaml:12:7", "data/a.yaml:100:7",
                                                 "data/b.yaml:3:7"]
    assert {x.status for x in report.rows} == {"ok", "broken"}  # statuses mixed: the place decides


def test_the_text_leads_with_counts_and_problems_and_counts_unchecked_pins_per_repository(tmp_path):
    """`atlas verify`: the counts first, then broken and stale pins; the unchecked ones one line per
    repository with how to get a clone; `--all` lists each of them with its place."""
    from atlas.terminal import render

    r, c1 = _setup(tmp_path)
    r.commit({"src/a.c": "line one\nint hccs_link2(void);\nline three\n"}, d(2))
    pins = [(f"o/r@{c1}:src/a.c#L2", "hccs_link"), (f"o/r@{c1}:src/missing.c#L1", "")]
    pins += [(f"far/away@{'a' * 40}:x.c#L{i}", "") for i in range(1, 4)] + [(f"no/url@{'b' * 40}:y.c#L1", "")]
    claims = _atlas(pins).claims
    atlas = Atlas(claims=claims, repositories=[Repository(id="o/r"), Repository(id="no/url"),
                                               Repository(id="far/away", urls=["https://example.org/far/away"])])
    report = verify(atlas, repos_root=tmp_path / "repos")
    text = render.verify(report).splitlines()
    assert text[0] == "pins: 0 ok, 1 broken, 1 stale, 4 unchecked (unchecked pins are not passed)"
    assert [line.split(": ")[1] for line in text[1:3]] == ["stale", "broken"]  # by place: line 10, then 11
    assert text[3] == (f"unchecked: far/away: 3 pins: no local clone of far/away under {tmp_path / 'repos'}; "
                       "`atlas refresh --clone --repo far/away` clones https://example.org/far/away")
    assert text[4].startswith("unchecked: no/url: 1 pin: no local clone") and "no https:// URL is listed" in text[4]
    assert len(text) == 6 and "--all" in text[5]
    every = render.verify(report, every=True).splitlines()
    assert len(every) == 7 and sum(": unchecked: " in line for line in every) == 4
    assert report.to_plain()["unchecked_repos"][0] == {
        "repo": "far/away", "pins": 3, "reason": f"no local clone of far/away under {tmp_path / 'repos'}",
        "hint": "`atlas refresh --clone --repo far/away` clones https://example.org/far/away"}
