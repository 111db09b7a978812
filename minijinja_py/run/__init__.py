"""Running a template: the evaluators of expressions and statements, macros, and the frames that
carry a render's scopes and state.  Above the builtins."""
