"""Speed and memory benchmarks of minijinja_py against Jinja2 and minijinja; not a test suite."""
