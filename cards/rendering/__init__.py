"""Render an agent's public documents when its state changes, and keep the facet counts.

See :mod:`cards.rendering.store` for when it happens and :mod:`cards.rendering.shapes` for the
shapes. Reads serve what is stored here (``cards.reads``).
"""
