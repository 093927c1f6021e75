from adkhost import CallbackContext  # noqa: F401
