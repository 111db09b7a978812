"""The values that exist while templates run: undefined values, markup, namespaces, loops, macros.

Above the sandbox (a namespace is sized as the budget's AttributeBag), below the builtins."""
