"""The syntax: the lexer, the LALR parser over the stored table of grammar/jinja.lark, the block
structure and the syntax tree's nodes.  Imports nothing of the engine but errors."""
