from adkhost import InvocationContext  # noqa: F401
