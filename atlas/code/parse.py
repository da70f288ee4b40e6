"""Parse one source file with tree-sitter: its function definitions (with their line ranges and
arities), the call sites inside each function, and its macros.

The result is plain data (tuples, lists, a dict) so that it can be cached by blob (atlas.code.store):

    {"lines": n,
     "functions": [(name, qualified, start, end, min_args, max_args, [call, ...], member), ...],
     "macros": [(name, start, end, params, variadic), ...],
     "includes": [the path of each #include, as written], "fields": [(class, field, type), ...],
     "usings": [the namespace of each `using namespace`, as written],
     "bases": [(class, [the names of its base classes, without template arguments]), ...]}
    call = (name, line, col, args, qualifier, text, receiver)

Which grammar reads a file follows its extension (`language_of`): `.c` is C; `.h` and the C++ and
CUDA extensions are C++ (the headers pinned by the atlas are C++; C parses as C++ but for C++
keywords used as names); `.py` is Python. What counts:

- a function is a definition with a body (`function_definition`); a prototype is not. Its range
  starts at the `template` line of a template (Python: at its first decorator) and ends at the
  closing brace. Its qualified name joins the enclosing namespaces and classes and the scope written
  in the declarator (`A<T>::f` -> `A::f`: template arguments are dropped);
- its arity is (required parameters, all parameters), with -1 for "any number" (`...`, a parameter
  pack, Python's `*args`/`**kwargs`); `f(void)` takes none; a Python method's first parameter is
  `self`/`cls` and not counted, unless the method is a `@staticmethod`;
- a call belongs to the innermost function around it; calls outside every function (a global
  initialiser) and inside macro bodies are not call sites; a call through an expression that has no
  name (`(*fp)(x)`, `f()()`) is not recorded, nor are C++'s named casts (`static_cast<T>(x)`);
- a macro is every `#define`; a function-like one records its parameter count and `...`;
- a function is a `member` when it is defined in a class body or its declarator names a scope
  (`Box::f`; Python: defined in a class);
- a member call (`obj.f()`, `p->f()`) records its receiver: the operator (`.` or `->`), then `this`
  (for `this->f()`, Python's `self.f()`), `T:<type>` when the receiver is a name declared in the
  function, a parameter, a class field of the same body or a global above (its type as written;
  Python: `T:<name>` for `name().f()`),
  `m:<name>` when a name is not declared there (a field of the caller's class, looked up in the
  `fields` of the indexed files by atlas.code.resolve), `?` otherwise (an expression, `auto`);
- `fields` are the data members declared in class bodies: (the class's qualified name, the
  field's name, its type as written).

Ascend C and CUDA put qualifiers the grammar does not know before and inside declarations
(`__aicore__`, `__gm__`, `LAUNCH_BOUND(N)`, ...): they are blanked out byte for byte before parsing
(`_QUALIFIERS`), so that lines and columns stay those of the blob.
"""
from __future__ import annotations

import re
from functools import lru_cache

_C_EXT = {".c"}
_CPP_EXT = {".h", ".hh", ".hpp", ".hxx", ".h++", ".cc", ".cpp", ".cxx", ".c++", ".cu", ".cuh", ".inl",
            ".ipp", ".tpp", ".tcc"}
_PY_EXT = {".py", ".pyi"}
SOURCE_EXTENSIONS = {"c": sorted(_C_EXT | _CPP_EXT), "python": sorted(_PY_EXT)}  # by family

_QUALIFIERS = re.compile(
    rb"\b(?:__aicore__|__gm__|__ubuf__|__global__|__simt_vf__|__simt_callee__|__device__|__host__"
    rb"|__forceinline__|__inline__|__noinline__|__restrict__|__cbuf__|__ca__|__cb__|__cc__|__fbuf__)\b"
    rb"|\b(?:LAUNCH_BOUND|__launch_bounds__)\s*\([^()\n]*\)")
_CASTS = {"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast"}  # operators, not calls
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_SPACE = re.compile(r"\s+")


def language_of(path: str) -> str:
    """"c", "cpp", "python", or "" for a file that is not parsed."""
    dot = path.rfind(".")
    ext = path[dot:].lower() if dot > path.rfind("/") else ""
    if ext in _C_EXT:
        return "c"
    if ext in _CPP_EXT:
        return "cpp"
    if ext in _PY_EXT:
        return "python"
    return ""


def family_of(language: str) -> str:
    """Calls link only within one family: C and C++ call each other, Python calls Python."""
    return "python" if language == "python" else "c" if language else ""


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def parse(data: bytes, language: str) -> dict:
    """The functions, calls and macros of one file (see the module's docstring)."""
    out: dict = {"lines": count_lines(data), "functions": [], "macros": [], "includes": [], "fields": [], "usings": [],
                 "bases": []}
    if not language:
        return out
    rules = _Python if language == "python" else _C
    source = data if language == "python" else _QUALIFIERS.sub(_blank, data)
    parser, query = _grammar(language)
    found = _captures(query, parser.parse(source).root_node)
    functions = []  # (start byte, end byte, record)
    for node in found.get("fn", []):
        record = rules.function(node)
        if record is not None:
            functions.append((node.start_byte, node.end_byte, record))
    functions.sort(key=lambda f: (f[0], -f[1]))
    calls = sorted(found.get("call", []), key=lambda n: n.start_byte)
    for (_start, _end, record), inside in zip(functions, _innermost(functions, calls)):
        record[6].extend(c for c in (rules.call(n) for n in inside) if c is not None)
    out["functions"] = sorted((f[2] for f in functions), key=lambda fn: (fn[2], fn[3], fn[0]))
    out["macros"] = [m for m in (_macro(n) for n in found.get("macro", [])) if m is not None]
    out["macros"].sort(key=lambda m: (m[1], m[0]))
    if language != "python":
        out["includes"] = [i for i in (_include(n) for n in found.get("include", [])) if i]
        out["fields"] = sorted(f for n in found.get("field", []) for f in _C.fields(n))
        out["bases"] = sorted(b for n in found.get("bases", []) if (b := _C.bases(n)) is not None)
        out["usings"] = sorted({"::".join(_plain_name(_text(n.named_children[-1]))) for n in found.get("using", [])
                                if n.named_children and any(c.type == "namespace" for c in n.children)})
    for fn in out["functions"]:
        fn[6].sort(key=lambda call: (call[1], call[2]))
    return out


def _captures(query, root) -> dict:
    import tree_sitter

    return tree_sitter.QueryCursor(query).captures(root)


def _innermost(functions: list, calls: list) -> list[list]:
    """For each function (sorted by start, outer before inner), the call nodes whose innermost
    enclosing function it is: one sweep over the byte offsets."""
    inside: list[list] = [[] for _ in functions]
    open_: list[int] = []  # indexes of the functions around the current position
    i = 0
    for call in calls:
        pos = call.start_byte
        while i < len(functions) and functions[i][0] <= pos:
            while open_ and functions[open_[-1]][1] <= functions[i][0]:
                open_.pop()
            open_.append(i)
            i += 1
        while open_ and functions[open_[-1]][1] <= pos:
            open_.pop()
        if open_:
            inside[open_[-1]].append(call)
    return inside


_QUERIES = {
    "c": "(function_definition) @fn (call_expression) @call (preproc_def) @macro (preproc_function_def) @macro"
         " (preproc_include) @include (field_declaration) @field",
    "cpp": "(function_definition) @fn (call_expression) @call (preproc_def) @macro (preproc_function_def) @macro"
           " (preproc_include) @include (field_declaration) @field (using_declaration) @using"
           " (base_class_clause) @bases",
    "python": "(function_definition) @fn (call) @call",
}


@lru_cache(maxsize=None)
def _grammar(language: str):
    """(parser, query) of a language."""
    import importlib

    import tree_sitter

    grammar = importlib.import_module({"c": "tree_sitter_c", "cpp": "tree_sitter_cpp"}.get(language,
                                                                                          "tree_sitter_python"))
    lang = tree_sitter.Language(grammar.language())
    return tree_sitter.Parser(lang), tree_sitter.Query(lang, _QUERIES[language])


def grammar_versions() -> str:
    """The versions of tree-sitter and its grammars: a parse cached under other versions is stale."""
    from importlib.metadata import PackageNotFoundError, version

    out = []
    for dist in ("tree-sitter", "tree-sitter-c", "tree-sitter-cpp", "tree-sitter-python"):
        try:
            out.append(f"{dist}={version(dist)}")
        except PackageNotFoundError:
            out.append(f"{dist}=-")
    return ",".join(out)


def _blank(m: re.Match) -> bytes:
    return re.sub(rb"[^\n]", b" ", m.group(0))


def _text(node) -> str:
    return node.text.decode("utf-8", "replace")


def _plain_name(text: str) -> list[str]:
    """`ns::A<T, U<V>>::f<int>` -> ["ns", "A", "f"]: template arguments dropped, split at ::."""
    text = _SPACE.sub("", text)
    if not text.startswith("operator"):
        while True:
            shorter = _TEMPLATE_ARGS.sub("", text)
            if shorter == text:
                break
            text = shorter
    return [p for p in text.split("::") if p]


def _first_line(node) -> int:
    """The first line of a definition: its `template <...>` (or decorator) line when it has one."""
    while node.parent is not None and node.parent.type in ("template_declaration", "decorated_definition"):
        node = node.parent
    return node.start_point[0] + 1


def _last_line(node) -> int:
    row, col = node.end_point
    return row if col == 0 and row > node.start_point[0] else row + 1


def _named(node) -> list:
    return [c for c in node.named_children if c.type != "comment"]


def _function(node, parts: list[str], scopes: list[str], sep: str, arity: tuple[int, int], member: bool) -> tuple:
    return (parts[-1], sep.join([*scopes, *parts]), _first_line(node), _last_line(node), arity[0], arity[1], [],
            member)


def _call_record(name_node, parts: list[str], args: int, callee, receiver: str = "") -> tuple:
    line, col = name_node.start_point
    return (parts[-1], line + 1, col + 1, args, "::".join(parts[:-1]), _SPACE.sub(" ", _text(callee))[:80],
            receiver)


def _include(node) -> str:
    path = node.child_by_field_name("path")
    return _text(path).strip().strip('<>"').strip() if path is not None else ""


_TYPE_NOISE = re.compile(r"\b(?:const|volatile|struct|class|union|enum|typename|mutable|static|inline|"
                         r"constexpr|thread_local|extern|register)\b|[&*]")


def type_text(node) -> str:
    """A declared type as written, without qualifiers, `&` and `*`; `?` for `auto`."""
    if node is None or node.type == "placeholder_type_specifier":
        return "?"
    text = _SPACE.sub("", _TYPE_NOISE.sub(" ", _text(node)))
    return text or "?"


_DECLARATORS = {"init_declarator", "pointer_declarator", "reference_declarator", "array_declarator",
                "parenthesized_declarator", "attributed_declarator"}


def _declared_names(node) -> list[str]:
    """The names a declaration (or parameter, field) declares: its declarators' identifiers."""
    out = []
    for i in range(node.child_count):
        if node.field_name_for_child(i) != "declarator":
            continue
        decl = node.children[i]
        while decl is not None and decl.type in _DECLARATORS:
            decl = decl.child_by_field_name("declarator") or next(
                (c for c in decl.named_children if c.type in _DECLARATORS | {"identifier", "field_identifier"}), None)
        if decl is not None and decl.type in ("identifier", "field_identifier"):
            out.append(_text(decl))
    return out


_HOLDERS = {"declaration", "field_declaration", "parameter_declaration", "optional_parameter_declaration",
            "for_range_loop"}


def _declared_type(ident) -> str | None:
    """The type of the declaration of `ident` seen from where it is used: the nearest declaration
    above it in the enclosing blocks, the function's parameters, the class body, the file; None
    when there is none."""
    name = _text(ident)
    node, at = ident.parent, ident.start_byte
    while node is not None:
        found = None
        kids = node.named_children
        if node.type == "function_definition":
            decl = node.child_by_field_name("declarator")
            while decl is not None and decl.type != "function_declarator":
                decl = decl.child_by_field_name("declarator")
            params = decl.child_by_field_name("parameters") if decl is not None else None
            kids = params.named_children if params is not None else []
        elif node.type == "for_range_loop":
            kids = [node]
        for kid in kids:
            if kid.type in _HOLDERS and (kid.start_byte < at or node.type in ("field_declaration_list",
                                                                              "function_definition", "for_range_loop")):
                if name in _declared_names(kid):
                    found = kid
        if found is not None:
            return type_text(found.child_by_field_name("type"))
        node = node.parent
    return None


def _macro(node) -> tuple | None:
    name = node.child_by_field_name("name")
    if name is None:
        return None
    params, variadic = -1, False
    plist = node.child_by_field_name("parameters")
    if plist is not None:
        params = sum(1 for c in plist.named_children if c.type == "identifier")
        variadic = any(c.type == "..." for c in plist.children)
    return (_text(name), node.start_point[0] + 1, _last_line(node), params, variadic)


class _C:
    _SCOPES = {"namespace_definition", "class_specifier", "struct_specifier", "union_specifier"}
    _NAMES = {"identifier", "field_identifier", "qualified_identifier", "destructor_name",
              "operator_name", "template_function", "operator_cast", "type_identifier"}

    @classmethod
    def function(cls, node) -> tuple | None:
        found = cls._declarator(node)
        if found is None:
            return None
        name_node, params = found
        parts = _plain_name(_text(name_node))
        member = len(parts) > 1 or (node.parent is not None and node.parent.type == "field_declaration_list") or \
            (node.parent is not None and node.parent.type == "template_declaration" and node.parent.parent is not None
             and node.parent.parent.type == "field_declaration_list")
        return _function(node, parts, cls._scopes(node), "::", cls._arity(params), member) if parts else None

    @classmethod
    def bases(cls, node) -> tuple[str, list[str]] | None:
        """(class, [its base classes' names]) of a `: public B<T>, C` clause."""
        holder = node.parent
        name = holder.child_by_field_name("name") if holder is not None else None
        if name is None:
            return None
        scope = "::".join([*cls._scopes(holder), *_plain_name(_text(name))])
        found = ["::".join(_plain_name(_text(c))) for c in node.named_children
                 if c.type in ("type_identifier", "template_type", "qualified_identifier")]
        return (scope, [b for b in found if b])

    @classmethod
    def fields(cls, node) -> list[tuple[str, str, str]]:
        """(class, field, type) of a data member declaration in a class body."""
        holder = node.parent
        if holder is None or holder.type != "field_declaration_list" or holder.parent is None:
            return []
        name = holder.parent.child_by_field_name("name")
        if name is None:
            return []
        scope = "::".join([*cls._scopes(holder.parent), *_plain_name(_text(name))])
        kind = type_text(node.child_by_field_name("type"))
        return [(scope, field, kind) for field in _declared_names(node)]

    @classmethod
    def _scopes(cls, node) -> list[str]:
        """The names of the namespaces and classes around a node, outermost first."""
        out: list[str] = []
        node = node.parent
        while node is not None:
            if node.type in cls._SCOPES and node.child_by_field_name("body") is not None:
                name = node.child_by_field_name("name")
                if name is not None:
                    out[:0] = _plain_name(_text(name))
            node = node.parent
        return out

    @classmethod
    def _declarator(cls, node):
        """(the declared name's node, the parameter list) of a function definition, or None."""
        found = None
        decl = node.child_by_field_name("declarator")
        while decl is not None:
            if decl.type == "function_declarator":
                inner = decl.child_by_field_name("declarator")
                if inner is not None and inner.type in cls._NAMES:
                    found = (inner, decl.child_by_field_name("parameters"))
                decl = inner
            elif decl.type in cls._NAMES:
                break
            else:
                decl = decl.child_by_field_name("declarator") or next(iter(_named(decl)), None)
        return found

    @staticmethod
    def _arity(params) -> tuple[int, int]:
        required = optional = 0
        items = _named(params) if params is not None else []
        if len(items) == 1 and items[0].type == "parameter_declaration" and _text(items[0]).strip() == "void":
            return 0, 0
        variadic = params is not None and any(c.type == "..." for c in params.children)  # C++'s bare `...`
        for p in items:
            if p.type in ("variadic_parameter", "variadic_parameter_declaration"):
                variadic = True
            elif p.type == "optional_parameter_declaration":
                optional += 1
            else:
                required += 1
        return required, -1 if variadic else required + optional

    @classmethod
    def call(cls, node) -> tuple | None:
        callee = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        target = callee.child_by_field_name("field") if callee is not None and callee.type == "field_expression" \
            else callee
        if target is None or target.type not in cls._NAMES | {"template_method"}:
            return None
        parts = _plain_name(_text(target))
        if not parts or (len(parts) == 1 and parts[0] in _CASTS):
            return None
        receiver = cls._receiver(callee) if callee.type == "field_expression" else ""
        return _call_record(target, parts, len(_named(args)) if args is not None else 0, callee, receiver)

    @staticmethod
    def _receiver(callee) -> str:
        """What a member call is made on (see the module's docstring)."""
        op = callee.child_by_field_name("operator")
        arrow = "->" if op is not None and op.type == "->" else "."
        arg = callee.child_by_field_name("argument")
        if arg is None:
            return arrow + "?"
        if arg.type == "this":
            return arrow + "this"
        if arg.type == "field_expression":
            inner = arg.child_by_field_name("argument")
            field = arg.child_by_field_name("field")
            if inner is not None and inner.type == "this" and field is not None:
                return f"{arrow}m:{_text(field)}"
            return arrow + "?"
        if arg.type == "identifier":
            kind = _declared_type(arg)
            return f"{arrow}m:{_text(arg)}" if kind is None else f"{arrow}T:{kind}"
        return arrow + "?"


class _Python:
    @classmethod
    def function(cls, node) -> tuple | None:
        name = node.child_by_field_name("name")
        if name is None:
            return None
        scopes: list[str] = []
        up = node.parent
        while up is not None:  # a function nested in a function is not qualified by its outer function
            if up.type == "class_definition" and up.child_by_field_name("name") is not None:
                scopes.insert(0, _text(up.child_by_field_name("name")))
            up = up.parent
        return _function(node, [_text(name)], scopes, ".", cls._arity(node, node.child_by_field_name("parameters")),
                         _in_class(node))

    @staticmethod
    def _arity(node, params) -> tuple[int, int]:
        required = optional = 0
        variadic = False
        for p in _named(params) if params is not None else []:
            inner = {c.type for c in p.named_children}
            if p.type in ("list_splat_pattern", "dictionary_splat_pattern") or \
                    inner & {"list_splat_pattern", "dictionary_splat_pattern"}:
                variadic = True
            elif p.type in ("default_parameter", "typed_default_parameter"):
                optional += 1
            elif p.type in ("identifier", "typed_parameter"):
                required += 1
        if _is_method(node) and required:
            required -= 1
        return required, -1 if variadic else required + optional

    @staticmethod
    def call(node) -> tuple | None:
        callee = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        target = callee.child_by_field_name("attribute") if callee is not None and callee.type == "attribute" \
            else callee
        if target is None or target.type != "identifier":
            return None
        items = _named(args) if args is not None else []
        if args is not None and args.type == "generator_expression":
            count = 1
        elif any(i.type in ("list_splat", "dictionary_splat") for i in items):
            count = -1
        else:
            count = len(items)
        receiver = ""
        if callee.type == "attribute":
            obj = callee.child_by_field_name("object")
            receiver = ".?"
            if obj is not None and obj.type == "identifier" and _text(obj) in ("self", "cls"):
                receiver = ".this"
            elif obj is not None and obj.type == "call" and (made := obj.child_by_field_name("function")) is not None \
                    and made.type == "identifier":  # `Engine().put()`: a method of what the call makes
                receiver = f".T:{_text(made)}"
        return _call_record(target, [_text(target)], count, callee, receiver)


def _in_class(node) -> bool:
    """A Python function defined directly in a class body (decorated or not)."""
    deco = node.parent if node.parent is not None and node.parent.type == "decorated_definition" else None
    holder = (deco or node).parent
    return holder is not None and holder.type == "block" and holder.parent is not None and \
        holder.parent.type == "class_definition"


def _is_method(node) -> bool:
    """A function defined directly in a class body (and not a @staticmethod)."""
    deco = node.parent if node.parent is not None and node.parent.type == "decorated_definition" else None
    holder = (deco or node).parent
    if holder is None or holder.type != "block" or holder.parent is None or holder.parent.type != "class_definition":
        return False
    return deco is None or not any(_text(d).strip() == "@staticmethod" for d in deco.children
                                   if d.type == "decorator")
