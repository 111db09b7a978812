"""`python -m minijinja_py`: the same command line as `minijinja-py`."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
