"""The terminal face: records and code shown as text (render, source).
May import: base, model, view, index (cache).
"""
