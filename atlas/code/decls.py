"""The declarations of one public header: what a program can name from it. Read with tree-sitter
(the C++ grammar of `parse.py`, which also reads C headers), as plain data that is cached by blob:

    [(kind, name, line, signature, canonical), ...]    sorted by (line, kind, name)

Kinds (`KINDS`):

- `function`: a prototype or an inline definition at file or namespace scope, inside `extern "C"`,
  or a public member of a class or struct (a constructor and a destructor too). Its name is
  qualified by the enclosing namespaces and classes and by the scope written in the declarator
  (`ns::Engine::Init`); template arguments are dropped from names. Function pointers held in
  variables and `friend` declarations are not functions of the header.
- `enum-constant`: each enumerator (those in preprocessor branches inside the body too); qualified
  by the enum's name for an `enum class`, else by the scopes around the enum (C enumerators live in
  the enclosing scope).
- `macro`: every `#define` but an include guard: the `#define X` with no body that is the first
  directive of an `#ifndef X` block standing first in the file (comments aside). The same pair further
  down (`#ifndef X_DEFINED / #define X_DEFINED` around a block users may define themselves) is a macro
  of the header.
- `type`: a struct, union, class or enum with a body and a name, a `typedef` name, a `using X = ...`
  alias.

Declarations in every preprocessor branch count (conditions are not evaluated). The line is the
line of the declared name. The signature is the declaration's text as written, comments removed,
whitespace collapsed to single spaces and decorations blanked:

- function: `[template <...>] <return type> <declarator>` (parameters, default arguments and
  trailing qualifiers; not a body, not `= 0`/`= delete`),
- enum constant: `NAME` or `NAME = <value>`,
- macro: `NAME`, `NAME(params)`, followed by its body when it has one,
- type: `struct NAME` (the body is not part of it), `typedef <type> <declarator>` (a body written
  inside the typedef as `{...}`), `using NAME = <type>`.

Decorations are the words a grammar cannot place: visibility and calling-convention macros
(`ACL_FUNC_VISIBILITY`, `ACLSHMEM_DEVICE`, `HCCL_API`, ...), `__attribute__((...))`,
`__declspec(...)` and the Ascend C qualifiers of `parse.py`. Outside preprocessor lines they are
blanked byte for byte before parsing (lines stay those of the blob): a word of the repository's
`decorations:` list anywhere, and any upper-case word ending in `_API`, `_VISIBILITY`, `_EXPORT`,
`_DEVICE`, `_HOST`, `_INLINE`, `_AICORE`, ... (`DECORATION`) when a name follows it (so an enum
constant such as `ACL_MEMCPY_HOST_TO_DEVICE,` stays); such a word ending in `_DEPRECATED`,
`_DEPRECATED_MESSAGE`/`_MSG` or `_ATTRIBUTE` with its argument list (`ACL_DEPRECATED_MESSAGE(` with
its message on the next lines, after an enumerator's name) (`DECORATION_CALL`); and an upper-case
word alone between a declarator's `)` and its `;` or `{` (`HcclGetCommConfigCapability()
HCOMM_WEAK_SYMBOL;`) (`TRAILING`); and a line holding only an upper-case macro that opens or closes a
region (`RT_RUNTIME_DEPRECATED_DECLS_BEGIN`, `..._DECLS_END`) (`REGION`).
"""
from __future__ import annotations

import re

from .parse import _grammar, _plain_name

KINDS = ("function", "enum-constant", "macro", "type")
VERSION = 5  # of these rules: stored API histories made under other rules are read again

DECORATION = re.compile(
    rb"\b[A-Z][A-Z0-9_]*_(?:API|APIS|EXPORT|EXPORTS|IMPORT|VISIBILITY|VISIBLE|DLL|DLLEXPORT|PUBLIC"
    rb"|DEVICE|HOST|INLINE|AICORE|FUNC|ATTR|ATTRIBUTE|DECL|EXTERN|NOEXCEPT|DEPRECATED)(?=[ \t]+[A-Za-z_~])")
_BALANCED = rb"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"
DECORATION_CALL = re.compile(rb"\b[A-Z][A-Z0-9_]*_(?:DEPRECATED|DEPRECATED_MESSAGE|DEPRECATED_MSG|ATTRIBUTE|ATTR)"
                             rb"\s*" + _BALANCED)
# an upper-case macro alone on its line that opens or closes a region (`RT_RUNTIME_DEPRECATED_DECLS_BEGIN`,
# which expands to a `_Pragma`): it would glue itself to the declaration that follows
REGION = re.compile(rb"^[ \t]*[A-Z][A-Z0-9_]*_(?:DECLS_BEGIN|DECLS_END|BEGIN_DECLS|END_DECLS)[ \t]*(?=\r?$)", re.M)
# an upper-case word (a macro: no C or C++ keyword is upper case) between `)` and `;` or `{`
TRAILING = re.compile(rb"(?<=\))(\s*)([A-Z][A-Z0-9_]*[A-Z0-9])(?=\s*[;{])")
_ATTRIBUTES = re.compile(rb"__(?:attribute__|declspec)\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)"
                         rb"|__declspec\s*\((?:[^()]|\([^()]*\))*\)")
# comments and preprocessor lines (with their continuations): never blanked
_NOT_CODE = re.compile(rb"/\*.*?\*/|//[^\n]*|^[ \t]*#(?:[^\n]*\\\r?\n)*[^\n]*", re.S | re.M)
# the Ascend C and CUDA qualifiers of `parse.py`, spelled with a literal start (faster to find)
_ASCEND = re.compile(rb"__(?:aicore|gm|ubuf|global|simt_vf|simt_callee|device|host|forceinline|inline|noinline"
                     rb"|restrict|cbuf|ca|cb|cc|fbuf)__(?![A-Za-z0-9_])|(?:LAUNCH_BOUND|__launch_bounds__)\s*\([^()\n]*\)")
_COMMENT = re.compile(r'("(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\')|/\*.*?\*/|//[^\n]*', re.S)
_SPACE = re.compile(r"\s+")
_UNSPACE = re.compile(r" (?![A-Za-z0-9_])|(?<![A-Za-z0-9_]) ")
_CONTAINERS = {"translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif",
               "preproc_elifdef", "declaration_list", "ERROR"}
_LEAVES_NOT = _CONTAINERS | {"linkage_specification", "namespace_definition"}  # walked into, not cached whole
_RECORDS = {"struct_specifier": "struct", "union_specifier": "union", "class_specifier": "class",
            "enum_specifier": "enum"}
_NAME_TYPES = {"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name",
               "template_function", "operator_cast", "type_identifier"}
MAX_SIGNATURE = 400  # characters kept of one declaration's signature


def declarations(data: bytes, decorations: tuple[str, ...] = (), memo: dict | None = None,
                 previous: list | None = None) -> list[tuple[str, str, int, str, str]]:
    """The declarations of a header's bytes (see the module's docstring). `memo` (a dict kept between
    calls) remembers what each declaration's text gave in its context: the versions of one header
    share most of their declarations, and those are not read again. `previous` ([source, tree] of the
    last version read of the same file, updated here) lets tree-sitter reparse only what changed."""
    source = blank_decorations(data, decorations)
    tree = _parse(source, previous)
    found: dict[tuple[str, str, int, str, str], None] = {}
    root = tree.root_node  # an ERROR node when the whole file did not parse: its guard is its own
    _Walk(found, memo).container(root, [], _include_guard(root) if root.type == "ERROR" else "")
    return sorted(found, key=lambda d: (d[2], d[0], d[1], d[3]))


def _parse(source: bytes, previous: list | None):
    parser, _query = _grammar("cpp")
    if not previous:
        tree = parser.parse(source)
    else:
        old_source, old_tree = previous
        start, old_end, new_end = _changed(old_source, source)
        old_tree = old_tree.copy()
        old_tree.edit(start_byte=start, old_end_byte=old_end, new_end_byte=new_end,
                      start_point=_point(source, start), old_end_point=_point(old_source, old_end),
                      new_end_point=_point(source, new_end))
        tree = parser.parse(source, old_tree)
    if previous is not None:
        previous[:] = [source, tree]
    return tree


def _point(data: bytes, at: int) -> tuple[int, int]:
    return data.count(b"\n", 0, at), at - (data.rfind(b"\n", 0, at) + 1)


def _changed(old: bytes, new: bytes) -> tuple[int, int, int]:
    """(start, old end, new end) of the one region that differs: the longest common prefix and suffix
    found by halving (each comparison a C memcmp)."""
    n = min(len(old), len(new))
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, n - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid:] == new[len(new) - mid:]:
            lo = mid
        else:
            hi = mid - 1
    return prefix, len(old) - lo, len(new) - lo


def blank_decorations(data: bytes, decorations: tuple[str, ...] = ()) -> bytes:
    """Blank (byte for byte, so lines and columns stay) the decorations in the code: outside comments
    and preprocessor lines."""
    subs = [_ASCEND, _ATTRIBUTES, DECORATION_CALL, DECORATION, TRAILING, REGION]
    if decorations:
        names = b"|".join(re.escape(d.encode()) for d in sorted(set(decorations), key=len, reverse=True))
        subs.append(re.compile(rb"\b(?:" + names + rb")\b(?:\s*\((?:[^()]|\([^()]*\))*\))?"))
    out = []
    pos = 0
    for m in _NOT_CODE.finditer(data):
        if m.start() > pos:
            out.append(_blank_code(data[pos:m.start()], subs))
        out.append(m.group(0))
        pos = m.end()
    out.append(_blank_code(data[pos:], subs))
    return b"".join(out)


def _blank_code(chunk: bytes, subs: list) -> bytes:
    for rx in subs:
        chunk = rx.sub(_fill, chunk)
    return chunk


def _fill(m: re.Match) -> bytes:
    """Spaces for a match, its line breaks kept."""
    g = m.group(0)
    if m.re is TRAILING:
        return m.group(1) + b" " * len(m.group(2))
    return b" " * len(g) if b"\n" not in g else bytes(32 if ch != 10 else 10 for ch in g)


def clean(text: str) -> str:
    """Comments removed (string literals kept), whitespace collapsed to single spaces, none after an
    opening bracket or before a closing one or a comma: the text as written, otherwise."""
    if "/" in text:
        text = _COMMENT.sub(lambda m: m.group(1) or " ", text)
    text = " ".join(text.split())
    if " " in text:
        for a, b in (("( ", "("), ("[ ", "["), (" )", ")"), (" ]", "]"), (" ,", ",")):
            if a in text:
                text = text.replace(a, b)
    return text


def canonical(signature: str) -> str:
    """A signature without the spaces that only format it (kept between two words): two signatures
    with the same canonical text are the same declaration."""
    return _UNSPACE.sub("", " ".join(signature.split()))


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _shown(sig: str) -> tuple[str, str]:
    """(the signature as kept: at most MAX_SIGNATURE characters; its canonical form, of the whole text:
    a digest when it is long, so that a change past the cut still counts)."""
    can = canonical(sig)
    if len(sig) <= MAX_SIGNATURE:
        return sig, can
    import hashlib

    return sig[:MAX_SIGNATURE - 1] + "\u2026", "#" + hashlib.sha1(can.encode()).hexdigest()


class _Walk:
    def __init__(self, found: dict, memo: dict | None = None):
        self.found = found
        self.memo = memo

    def cached(self, node, context: tuple, run) -> None:
        """`run()` for one declaration, or what the same text gave in the same context before (its
        lines moved to where it is now)."""
        if self.memo is None:
            run()
            return
        key = (context, node.text)
        base = node.start_point[0]
        hit = self.memo.get(key)
        if hit is None:
            outer, self.found = self.found, {}
            try:
                run()
                hit = [(k, n, line - base, d, c) for (k, n, line, d, c) in self.found]
            finally:
                self.found = outer
            self.memo[key] = hit
        for k, n, rel, d, c in hit:
            self.found[(k, n, rel + base, d, c)] = None

    def add(self, kind: str, name: str, node, signature: str) -> None:
        if name:
            self.found[(kind, name, node.start_point[0] + 1, *_shown(signature))] = None

    # -- containers -------------------------------------------------------------------------

    def container(self, node, scopes: list[str], guard: str = "") -> None:
        """The declarations of a container node; `guard` is the include guard of the file when `node`
        is the `#ifndef` block standing first in it."""
        first = _first_block(node) if node.type == "translation_unit" else None
        for child in node.named_children:
            if first is not None and child == first and child.type in ("preproc_ifdef", "ERROR"):
                self.container(child, scopes, _include_guard(child))
                continue
            if child.type == "preproc_def" and guard and child.child_by_field_name("name") is not None \
                    and _text(child.child_by_field_name("name")) == guard \
                    and child.child_by_field_name("value") is None:
                guard = ""
                continue
            if child.type in _LEAVES_NOT:
                self.item(child, scopes)
            elif child.type != "comment":
                self.cached(child, ("i", *scopes), lambda child=child: self.item(child, scopes))

    def item(self, node, scopes: list[str]) -> None:
        kind = node.type
        if kind in _CONTAINERS:
            self.container(node, scopes)
        elif kind == "linkage_specification":
            body = node.child_by_field_name("body")
            if body is not None:
                (self.container if body.type == "declaration_list" else self.item)(body, scopes)
        elif kind == "namespace_definition":
            name = node.child_by_field_name("name")
            body = node.child_by_field_name("body")
            if body is not None:
                self.container(body, scopes + (_plain_name(_text(name)) if name is not None else []))
        elif kind == "template_declaration":
            self.template(node, scopes)
        elif kind in ("preproc_def", "preproc_function_def"):
            self.macro(node)
        else:
            self.declaration(node, scopes, "")

    def template(self, node, scopes: list[str]) -> None:
        params = node.child_by_field_name("parameters")
        prefix = "template " + clean(_text(params)) if params is not None else "template"
        for child in node.named_children:
            if child.type in ("declaration", "function_definition", "field_declaration", "alias_declaration") \
                    or child.type in _RECORDS or child.type == "template_declaration":
                if child.type == "template_declaration":
                    self.template(child, scopes)
                else:
                    self.declaration(child, scopes, prefix)

    # -- one declaration ----------------------------------------------------------------------

    def declaration(self, node, scopes: list[str], prefix: str) -> None:
        kind = node.type
        if kind in ("declaration", "field_declaration", "function_definition"):
            self.typed(node, scopes, prefix)
        elif kind == "type_definition":
            self.typedef(node, scopes)
        elif kind == "alias_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                self.add("type", "::".join([*scopes, _text(name)]), name, clean(_text(node)).rstrip(";").strip())
        elif kind in _RECORDS:
            self.record(node, scopes)
        elif kind == "expression_statement" or kind == "ERROR":
            pass

    def typed(self, node, scopes: list[str], prefix: str) -> None:
        """A declaration with a type: records declared in it, then its function declarators."""
        if any(c.type == "friend" or _text(c) == "friend" for c in node.children[:2]):
            return
        type_node = node.child_by_field_name("type")
        if type_node is not None and type_node.type in _RECORDS:
            self.record(type_node, scopes)
        for decl in node.children_by_field_name("declarator"):
            found = _function_declarator(decl)
            if found is None:
                continue
            name_node, fdecl = found
            parts = _plain_name(_text(name_node))
            if not parts:
                continue
            head = _type_text(node, type_node)
            sig = " ".join(x for x in (prefix, head, clean(_text(decl) if node.type != "function_definition"
                                                           else _text(fdecl))) if x)
            self.add("function", "::".join([*scopes, *parts]), name_node, sig)

    def typedef(self, node, scopes: list[str]) -> None:
        type_node = node.child_by_field_name("type")
        if type_node is not None and type_node.type in _RECORDS:
            self.record(type_node, scopes)
        head = _type_text(node, type_node)
        for decl in node.children_by_field_name("declarator"):
            name_node = _declared_name(decl)
            if name_node is None:
                continue
            self.add("type", "::".join([*scopes, *_plain_name(_text(name_node))]), name_node,
                     f"typedef {head} {clean(_text(decl))}".replace("  ", " "))

    def record(self, node, scopes: list[str]) -> None:
        """A struct, union, class or enum: its name as a type (when it has a body), its enumerators, its
        public members."""
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if body is None:
            return
        word = _RECORDS[node.type]
        scoped = node.type == "enum_specifier" and any(c.type in ("class", "struct") for c in node.children)
        qualified = [*scopes, *_plain_name(_text(name))] if name is not None else list(scopes)
        if name is not None:
            self.add("type", "::".join(qualified), name, f"{word}{' class' if scoped else ''} {'::'.join(qualified)}")
        if node.type == "enum_specifier":
            self.enumerators(body, qualified if scoped else scopes)
            return
        if name is not None:
            self.members(body, qualified, public=node.type != "class_specifier")

    def enumerators(self, body, scopes: list[str]) -> None:
        """The enumerators of an enum's body, those inside preprocessor branches too."""
        for e in body.named_children:
            if e.type == "enumerator":
                self.enumerator(e, scopes)
            elif e.type == "ERROR" and _text(e).startswith(("#ifdef", "#ifndef")):
                # a branch whose last enumerator has no comma: tree-sitter leaves the names bare
                for i, x in enumerate(e.named_children):
                    if x.type == "enumerator":
                        self.enumerator(x, scopes)
                    elif x.type == "identifier" and i > 0:
                        self.add("enum-constant", "::".join([*scopes, _text(x)]), x, _text(x))
            elif e.type in _CONTAINERS - {"translation_unit", "declaration_list"}:
                self.enumerators(e, scopes)

    def enumerator(self, node, scopes: list[str]) -> None:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        sig = _text(name) + (f" = {clean(_text(value))}" if value is not None else "")
        self.add("enum-constant", "::".join([*scopes, _text(name)]), name, sig)

    def members(self, body, scopes: list[str], public: bool) -> None:
        for child in body.named_children:
            if child.type == "access_specifier":
                public = _text(child).strip().rstrip(":").strip() == "public"
            elif child.type in _CONTAINERS - {"translation_unit"}:
                self.members(child, scopes, public)
            elif public and child.type in ("preproc_def", "preproc_function_def"):
                self.cached(child, ("m",), lambda child=child: self.macro(child))
            elif public and child.type != "comment":
                self.cached(child, ("m", *scopes), lambda child=child: self.member(child, scopes))

    def member(self, child, scopes: list[str]) -> None:
        if child.type == "template_declaration":
            self.template(child, scopes)
        else:
            self.declaration(child, scopes, "")

    def macro(self, node) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        params = node.child_by_field_name("parameters")
        value = node.child_by_field_name("value")
        sig = _text(name) + (clean(_text(params)) if params is not None else "")
        if value is not None:
            body = clean(_text(value).replace("\\\n", " "))
            if body:
                sig += " " + body
        self.add("macro", _text(name), name, sig)


def _first_block(unit):
    """The first named child of the file that is not a comment."""
    return next((c for c in unit.named_children if c.type != "comment"), None)


def _include_guard(node) -> str:
    """The guard name when `node` is `#ifndef X` whose first directive is `#define X` (no body). The
    block may have been read as an ERROR node (an `extern "C" {` opened in one `#ifdef` and closed in
    another): then X is its first identifier."""
    if node.type not in ("preproc_ifdef", "ERROR") or not _text(node).startswith("#ifndef"):
        return ""
    name = node.child_by_field_name("name") if node.type == "preproc_ifdef" else \
        next((c for c in node.named_children if c.type == "identifier"), None)
    first = next((c for c in node.named_children if c.type not in ("identifier", "comment")), None)
    if name is None or first is None or first.type != "preproc_def":
        return ""
    return _text(name)


def _function_declarator(decl):
    """(the name node, the function declarator) when `decl` declares a function (through pointers or
    references to its result); None for anything else (a variable, a pointer to a function)."""
    node = decl
    while node is not None:
        if node.type == "function_declarator":
            inner = node.child_by_field_name("declarator")
            if inner is not None and inner.type in _NAME_TYPES:
                return inner, node
            return None  # `(*fp)(...)`: a variable holding a function pointer
        if node.type in ("pointer_declarator", "reference_declarator", "attributed_declarator"):
            node = node.child_by_field_name("declarator") or next(
                (c for c in node.named_children if c.type.endswith("declarator")), None)
            continue
        return None
    return None


def _declared_name(decl):
    """The name a typedef's declarator declares (`*PX`, `(*Fn)(int)`, `X[4]` -> PX, Fn, X)."""
    node = decl
    for _ in range(16):
        if node is None:
            return None
        if node.type in ("type_identifier", "identifier", "primitive_type"):
            return node
        inner = node.child_by_field_name("declarator")
        if inner is None:
            inner = next((c for c in node.named_children if c.type.endswith("declarator")
                          or c.type in ("type_identifier", "identifier")), None)
        node = inner
    return None


def _type_text(node, type_node) -> str:
    """The specifiers and type of a declaration as written up to its first declarator (a body written
    inside, as in `typedef struct {...} X`, shortened to `{...}`)."""
    first = node.child_by_field_name("declarator")
    if first is None:
        return ""
    parts = []
    for child in node.children:
        if child.start_byte >= first.start_byte:
            break
        if child.type in ("friend", "typedef", ";"):
            continue
        parts.append(_record_head(child) if child.type in _RECORDS else _text(child))
    return clean(" ".join(parts))


def _record_head(node) -> str:
    body = node.child_by_field_name("body")
    if body is None:
        return _text(node)
    return (node.text[:body.start_byte - node.start_byte].decode("utf-8", "replace").strip() + " {...}")
