"""rlcc.templates: the Jinja2 templates of the generated C and headers (trees, int8, DOCA, switch
agent), as package data.
"""
