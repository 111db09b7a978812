"""The builtins: filters, tests, allow-listed methods, formatting, operators, and the attribute
policy that says what a template may reach.  Below the evaluators, above the values."""
