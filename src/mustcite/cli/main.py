"""The ``mustcite`` command.

Each ``mustcite.cli.<module>`` listed in ``_COMMAND_MODULES`` has a ``register(app)`` function
that adds its commands. Exit codes: 0 ok, 1 failure, 2 usage. Errors the user can act on
(:class:`mustcite.errors.MustciteError`) are printed as one clear message, never a traceback.
"""

from __future__ import annotations

import importlib
import os
import sys

import click
import typer

from ..errors import MustciteError
from ..quiet import quiet_libraries
from ..shown import shown
from .common import exit_now

try:  # typer >= 0.29 vendors click as typer._click, with its own exception classes
    from typer._click.exceptions import UsageError as _TyperUsageError
except ImportError:  # pragma: no cover
    _TyperUsageError = click.exceptions.UsageError

_COMMAND_MODULES = ["data", "extract", "corpus", "works", "benchmark", "labels", "annotate", "judge", "recommend",
                    "scidoca", "collect", "refcheck", "lsp"]

app = typer.Typer(
    name="mustcite",
    help="Which papers must your paper cite? Corpus, extraction, labels, benchmark, recommender.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    data: str = typer.Option(None, "--data", help="data directory (default: $MUSTCITE_DATA or ../shared/data)"),
    work: str = typer.Option(None, "--work", help="work directory (default: $MUSTCITE_WORK or ./mustcite-work)"),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="also show the libraries' log messages and warnings"),
) -> None:
    quiet_libraries(verbose)
    if data:
        os.environ["MUSTCITE_DATA"] = data
    if work:
        os.environ["MUSTCITE_WORK"] = work


for _name in _COMMAND_MODULES:
    importlib.import_module(f"{__package__}.{_name}").register(app)


_ENV_OPTIONS = ("MUSTCITE_DATA", "MUSTCITE_WORK")


def main(argv: list[str] | None = None) -> int:
    # --data / --work set environment variables for the stages; restore them afterwards so an
    # in-process call (tests, the Python API) does not leak them into the next one
    saved = {k: os.environ.get(k) for k in _ENV_OPTIONS}
    try:
        return _run(argv)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _run(argv: list[str] | None) -> int:
    command = typer.main.get_command(app)
    try:
        command.main(args=argv, prog_name="mustcite", standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.exceptions.UsageError, _TyperUsageError) as exc:
        exc.show()
        return 2
    except click.exceptions.Abort:
        print("aborted", file=sys.stderr)
        return 1
    except click.exceptions.ClickException as exc:
        exc.show()
        return exc.exit_code
    except MustciteError as exc:
        print(f"error: {shown(exc)}", file=sys.stderr)
        return exc.exit_code
    except RecursionError:     # a reader recursing on thousands of nested brackets or folders
        print("error: an input is nested too deeply to read (thousands of nested brackets or folders)",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    return 0


def console_main() -> None:
    """The ``mustcite`` command: :func:`main`, then :func:`exit_now` with its exit code."""
    exit_now(main())


if __name__ == "__main__":  # pragma: no cover
    console_main()
