"""The distribution's version, read by the build backend and by the docs."""

__version__ = "0.1.0.dev0"
