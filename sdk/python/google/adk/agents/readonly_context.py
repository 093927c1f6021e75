from adkhost import ReadonlyContext  # noqa: F401
