"""The views every face shows (views, viewtypes), which record a term names (terms), and the lists
and walks made of views (queries). May import: base, model.
"""
