"""Answers in pages that fit a byte budget, and the cursors that continue them.

A long answer (every claim, the whole timeline, a hundred search hits, a large SPARQL result) is cut
into pages whose text stays under `PAGE_BYTES`, so that an assistant's client, which caps a tool's
answer, receives all of it a page at a time. A page is the answer itself with some of its items:
the lists named by `paths` (for the timeline three lists, taken as one sequence in their order)
hold the items of this page; every other field is repeated on each page. `page` says where the
page sits: `{offset, count, total, next_cursor}`; `next_cursor` is null on the last page.

A cursor is opaque to the client: the offset of the next page and a digest of the call that made
it (the tool, its arguments and the data's key), so a cursor is accepted only with the arguments
it was given for, and only while the data are the same. A page holds at least one item, so an
item larger than the budget is sent alone, on a page of its own.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Sequence, TypedDict

from ..errors import AtlasError, Location

PAGE_BYTES = 19_000  # the UTF-8 bytes of a page's text; "under 20,000" with room for the cursor

Path = tuple[str, ...]  # keys from the top of the answer to a list of items


class Page(TypedDict):
    offset: int  # the first item of this page, counted over the whole answer
    count: int  # items on this page
    total: int  # items in the whole answer
    next_cursor: str | None  # give it as `cursor`, with the same arguments, for the next page


def call_digest(tool: str, arguments: dict, key: str) -> str:
    """What a cursor is bound to: the tool, its arguments (except the cursor) and the data's key."""
    plain = {k: v for k, v in arguments.items() if k != "cursor" and v is not None}
    text = json.dumps([tool, plain, key], sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _seal(call: str, offset: int) -> str:
    return hashlib.sha256(f"{call}:{offset}".encode()).hexdigest()[:16]


def make_cursor(call: str, offset: int) -> str:
    return f"{offset}.{_seal(call, offset)}"


def cursor_offset(cursor: str | None, call: str, where: str = "cursor") -> int:
    """The offset a cursor continues from (0 without one); a cursor made for another call, or for
    other data, or not made here at all, is a located error."""
    if not cursor:
        return 0
    offset, _, seal = cursor.partition(".")
    if offset.isdigit() and len(offset) < 10 and seal == _seal(call, int(offset)):
        return int(offset)
    shown = cursor if len(cursor) <= 40 else cursor[:37] + "..."
    raise AtlasError(f'cursor "{shown}" does not continue this call', Location(where),
                     "give a cursor with the same arguments as the call that returned it, or leave it "
                     "out for the first page")


def _get(value: dict, path: Path) -> list:
    for key in path[:-1]:
        value = value[key]
    return value[path[-1]]


def _with_lists(value: dict, paths: Sequence[Path], lists: Sequence[list]) -> dict:
    """A copy of `value` with the list at each path replaced (the other fields shared)."""
    out = dict(value)
    for path, items in zip(paths, lists):
        node = out
        for key in path[:-1]:
            node[key] = dict(node[key])
            node = node[key]
        node[path[-1]] = items
    return out


def _split(items: list[tuple[int, Any]], n_lists: int) -> list[list]:
    lists: list[list] = [[] for _ in range(n_lists)]
    for which, item in items:
        lists[which].append(item)
    return lists


def _item_bytes(item: Any, depth: int) -> int:
    """The bytes one list item adds to an indented JSON text (indent 2) at nesting `depth`."""
    text = json.dumps(item, ensure_ascii=False, indent=2, sort_keys=True)
    return len(text.encode()) + text.count("\n") * 2 * depth + 2 * depth + 2


def page(value: dict, paths: Sequence[Path], offset: int, call: str, render: Callable[[Any], str],
         budget: int = PAGE_BYTES, item_bytes: Callable[[Any, int], int] = _item_bytes) -> dict:
    """The page of `value` that starts at item `offset` and whose text, `render(page)`, fits the
    budget, with its `page` field. `item_bytes(item, depth)` estimates what one item adds to the
    text. `offset` past the end is an error (the data changed)."""
    items = [(which, item) for which, path in enumerate(paths) for item in _get(value, path)]
    total = len(items)
    if offset > total:
        raise AtlasError(f"cursor offset {offset} is past the end ({total} items)", Location("cursor"),
                         "leave the cursor out for the first page")

    def build(count: int) -> dict:
        end = offset + count
        after = make_cursor(call, end) if end < total else None
        out = _with_lists(value, paths, _split(items[offset:end], len(paths)))
        out["page"] = {"offset": offset, "count": count, "total": total, "next_cursor": after}
        return out

    used = len(render(build(0)).encode()) + len(make_cursor(call, total))
    count = 0
    for which, item in items[offset:]:
        used += item_bytes(item, len(paths[which]) + 1)
        if used > budget and count:
            break
        count += 1
    out = build(count)
    while count > 1 and len(render(out).encode()) > budget:  # the estimate missed escapes
        count -= 1
        out = build(count)
    return out



class Store:
    """The whole answers of the latest calls, by their call digest, so that a cursor continues from
    the stored answer instead of computing it again (the next page costs no more than the first).
    Holds at most `size` answers, the least recently used dropped first; safe across threads."""

    def __init__(self, size: int = 16):
        import threading
        from collections import OrderedDict

        self.size = size
        self._answers: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, call: str, compute: Callable[[], Any]) -> Any:
        """The stored answer of `call`, or `compute()` stored under it (computed outside the lock)."""
        with self._lock:
            if call in self._answers:
                self._answers.move_to_end(call)
                return self._answers[call]
        value = compute()
        with self._lock:
            self._answers[call] = value
            self._answers.move_to_end(call)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)
        return value


def text_pages(text: str, budget: int = PAGE_BYTES - 1_000) -> list[str]:
    """`text` cut into pages of at most `budget` UTF-8 bytes, at line ends where a line fits (a
    longer line is cut between characters). Put together, the pages are the text."""
    pages: list[str] = []
    current: list[str] = []
    used = 0
    for line in text.splitlines(keepends=True):
        size = len(line.encode())
        while size > budget:  # a line longer than a page: cut it between characters
            if current:
                pages.append("".join(current))
                current, used = [], 0
            head = line.encode()[:budget].decode("utf-8", "ignore")
            pages.append(head)
            line = line[len(head):]
            size = len(line.encode())
        if used + size > budget and current:
            pages.append("".join(current))
            current, used = [], 0
        if line:
            current.append(line)
            used += size
    if current or not pages:
        pages.append("".join(current))
    return pages
