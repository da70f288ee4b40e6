"""A flow's shared-window layout (`layout:` in a flow file): read by the loader with its checks, carried
by the flow view, its pins owned by the flow (verify and the code index see them), and drawn on the
flow page as an SVG band per region with the table of writers and readers. Over the fixture atlas of
tests/test_code.py (files the tests write)."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from atlas import commands
from atlas.index.compiled import load_atlas
from atlas.view.views import everything, owned_evidence

from test_code import MINI, _fixture_atlas

LAYOUT = """layout:
  - id: flags
    label: {{en: "Flags", zh: "标志区"}}
    offset: "0"
    size: "n x 512"
    writers: {{en: "the putting core", zh: "写入核"}}
    readers: {{en: "the waiting core", zh: "等待核"}}
    evidence:
      - pin: example/shmem@{c1}:src/put.c#L11-L18
        symbol: put_signal
        confidence: read-in-source
  - id: data
    label: {{en: "Data", zh: "数据区"}}
    offset: "n x 512"
    size: "n x h"
    evidence:
      - pin: example/shmem@{c1}:src/put.c#L13-L15
        confidence: read-in-source
  - id: head
    label: {{en: "Head of the data", zh: "数据区头部"}}
    offset: "start of the data"
    size: "64"
    part_of: {part_of}
    evidence:
      - pin: example/shmem@{c1}:src/put.c#L13
        confidence: read-in-source
"""


def _with_layout(tmp: Path, part_of: str = "data"):
    os.environ["ATLAS_CACHE"] = str(tmp / "cache")
    _atlas, root, c1, _c2 = _fixture_atlas(tmp)
    flow = tmp / "data" / "flows" / "put-signal.yaml"
    text = flow.read_text(encoding="utf-8")
    flow.write_text(text.replace("steps:\n", LAYOUT.format(c1=c1, part_of=part_of) + "steps:\n", 1),
                    encoding="utf-8")
    return tmp / "data", root, c1


def test_the_layout_is_loaded_viewed_and_its_pins_are_owned_by_the_flow(tmp_path):
    data, _root, c1 = _with_layout(tmp_path)
    atlas = load_atlas(data, use_cache=False)
    (flow,) = [f for f in everything(atlas)["flows"] if f["id"] == "put-signal"]
    assert [r["id"] for r in flow["layout"]] == ["flags", "data", "head"]
    assert flow["layout"][2]["part_of"] == "data" and flow["layout"][0]["writers"]["zh"] == "写入核"
    pins = {str(e.pin) for o, e in owned_evidence(atlas) if o.kind == "flow" and o.id == "put-signal"}
    assert f"example/shmem@{c1}:src/put.c#L13" in pins
    assert commands.validate(data_dir=data).code == 0


def test_a_part_of_a_region_not_listed_before_it_is_an_error_at_its_line(tmp_path):
    data, _root, _c1 = _with_layout(tmp_path, part_of="nowhere")
    answer = commands.validate(data_dir=data)
    assert answer.code == 1 and "unknown-ref" in answer.out and "put-signal.yaml:" in answer.out
    assert "Traceback" not in answer.out + answer.err


def test_the_flow_page_draws_one_band_per_region_and_lists_writers_and_readers(tmp_path):
    data, _root, _c1 = _with_layout(tmp_path)
    empty = tmp_path / "no-clones"
    empty.mkdir()
    site = tmp_path / "site"
    assert commands.site(out_dir=str(site), data_dir=data, repos_dir=empty).code == 0
    page = (site / "flow-put-signal.html").read_text(encoding="utf-8")
    svg = re.search(r'<svg class="window-svg".*?</svg>', page, re.S)
    assert svg is not None
    assert len(re.findall(r'<g class="region depth-0"', svg.group(0))) == 2
    assert len(re.findall(r'<g class="region depth-1"', svg.group(0))) == 1
    assert 'id="region-head"' in svg.group(0) and "标志区" in svg.group(0)
    table = page[page.index('class="window-table"'):]
    assert "the putting core" in table and "等待核" in table
    assert "see its parts below" in table  # the data region: writers only on its part
    plain = tmp_path / "plain"
    shutil.copytree(MINI, plain)  # the same atlas without a layout draws no window
    assert commands.site(out_dir=str(tmp_path / "site2"), data_dir=plain, repos_dir=empty).code == 0
    assert '<svg class="window-svg"' not in (tmp_path / "site2" / "flow-put-signal.html").read_text(encoding="utf-8")
