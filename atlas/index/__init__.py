"""The compiled index (compiled, database, update), the cache and its locks' users (cache), the cards,
the ranked search and the API store kept beside it. May import: base, model, view, ask.tokens/spelling.
"""
