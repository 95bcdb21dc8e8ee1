"""`python -m grader.pool build|verify`: the maintainer's commands for the generated pool."""

from __future__ import annotations

from pathlib import Path

import typer

from grader.chapter import load_chapter
from grader.pool.curate import build
from grader.pool.store import PoolError, load_pool, verify_pool

# -- command line ---------------------------------------------------------------------------------

app = typer.Typer(help="Build and verify a chapter's generated mutant pool.", no_args_is_help=True)


@app.command("build")
def build_command(
    chapter: str = typer.Option("L4.3", help="chapter id (chapters/<id>.toml)"),
    cache: Path = typer.Option(None, help="a JSON file that keeps mutant outcomes between builds"),
) -> None:
    """Generate every mutmut mutant of the reference, curate it against both suites, freeze it."""
    try:
        counts = build(load_chapter(chapter), cache_path=cache, echo=typer.echo)
    except PoolError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(" ".join(f"{key}={value}" for key, value in counts.items()))


@app.command("verify")
def verify_command(chapter: str = typer.Option("L4.3", help="chapter id (chapters/<id>.toml)")) -> None:
    """Check that every frozen patch applies to the current reference and the version matches."""
    loaded = load_chapter(chapter)
    try:
        pool = load_pool(loaded.manifest)
    except PoolError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    problems = verify_pool(pool, loaded.reference_impl.read_text(encoding="utf-8"))
    for problem in problems:
        typer.echo(f"error: {problem}", err=True)
    if problems:
        raise typer.Exit(1)
    typer.echo(f"pool {pool.version}: {len(pool.mutants)} mutants apply to the reference")


if __name__ == "__main__":
    app()

