"""The read side: everything the registry shows to people and programs goes through here.

``gate`` decides what a reader may see; ``documents`` renders an agent's public documents at
write time and serves them; ``facets`` reads the maintained counts; ``paging`` is the one cursor
and limit rule. Choosing and ranking agents is the search app's (search/), above this layer.
"""
