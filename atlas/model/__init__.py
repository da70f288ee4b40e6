"""The records and the Atlas (core, no I/O), their vocabularies, and data/ read into them: the one walk, the
loader's parts (yamlnodes, fromyaml, hygiene, load), the checks, the API histories. May import: base.
"""
