"""Command-line front end (``mustcite``). Thin: every command calls the library."""
