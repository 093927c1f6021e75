from adkhost import Context  # noqa: F401
