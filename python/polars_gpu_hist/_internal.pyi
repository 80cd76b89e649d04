"""The native module: the expression plugin lives here, called through ``register_plugin_function``."""

__version__: str
