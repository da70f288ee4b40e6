"""What `atlas query` is asked: tokens, one-edit spelling, what a question asks (understand, querywords.yaml)
and the answer (answer). May import: base, model, view; answer also index.
"""
