"""`atlas refresh`, `atlas timeline`, `atlas verify`: the history axis (thin: the logic lives in
atlas.harvest)."""
from __future__ import annotations

import sys

import click

from .. import commands
from .common import common_options, day_callback, finish, table_option


class _Bars:
    """One click progress bar per repository, on a terminal only."""

    def __init__(self):
        self.repo = None
        self.bar = None
        self.done = 0

    def __call__(self, repo, done, total):
        if repo != self.repo:
            self.close()
            self.repo = repo
            self.bar = click.progressbar(length=max(total, 1), label=repo, file=sys.stderr,
                                         show_pos=True, width=30)
            self.bar.__enter__()
            self.done = 0
        if done > self.done:
            self.bar.update(done - self.done)
            self.done = done

    def close(self):
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


class _SharedBar(_Bars):
    """One bar over the commits of all repositories harvested at once (`-j` above 1)."""

    def __init__(self):
        super().__init__()
        self.seen: dict[str, tuple[int, int]] = {}

    def __call__(self, repo, done, total):
        self.seen[repo] = (done, total)
        if self.bar is None:
            self.bar = click.progressbar(length=1, label="harvest", file=sys.stderr,
                                         show_pos=True, width=30)
            self.bar.__enter__()
        self.bar.length = max(1, sum(t for _d, t in self.seen.values()))
        now = sum(d for d, _t in self.seen.values())
        self.bar.label = f"{repo} ({len(self.seen)} repositories)"
        if now > self.done:
            self.bar.update(now - self.done)
            self.done = now


@click.command()
@click.option("--cutoff", metavar="DATE", default=None, callback=day_callback,
              help="Research cut-off YYYY-MM-DD (end of that day, UTC, on the committer date); "
                   "default: the atlas cut-off.")
@click.option("--repo", "repo_ids", multiple=True, metavar="ID", help="Only this repository (repeatable).")
@click.option("--concept", "concept_ids", multiple=True, metavar="ID",
              help="Only the probes of this concept (repeatable).")
@table_option("repos_dir")
@click.option("--clone", is_flag=True,
              help="Clone missing repositories from their https:// URL (git's url.<base>.insteadOf "
                   "may route it over ssh; the only network use).")
@click.option("--clone-timeout", type=click.FloatRange(min=1), default=None, metavar="SECONDS",
              help="With --clone: stop a clone that takes longer, with every process it started, and "
                   "remove its partial folder (default: 1800).")
@click.option("--allow-shallow", is_flag=True,
              help="Harvest shallow clones too; every date is then on-or-before.")
@click.option("--fetch-missing", is_flag=True,
              help="Let git fetch the missing blobs of a partial clone from its promisor remote "
                   "(network use); without it probes those blobs could hold are `unknown`.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Harvest N repositories at once in separate processes (default: the number "
                   "of CPUs).")
@click.option("--wait", is_flag=True,
              help="When another refresh is running on the same data folder, wait for it to "
                   "finish (default: stop with a message).")
@common_options
def refresh(cutoff, repo_ids, concept_ids, repos_dir, clone, clone_timeout, allow_shallow, fetch_missing, jobs,
            wait, data_dir, fmt):
    """Harvest when each probe first became visible on its repository's mainline into
    data/timeline.yaml (incremental: unchanged repositories return at once).

    \b
    Examples:
      atlas refresh
      atlas refresh --repo hicann/hccl --cutoff 2026-06-30
      atlas refresh -j 2
    """
    from ..commands import refresh as run

    bars = None
    if fmt == "text" and sys.stderr.isatty():
        bars = _Bars() if jobs == 1 else _SharedBar()
    try:
        result = run(data_dir, repos_dir, fmt, cutoff, repo_ids, concept_ids, clone, allow_shallow, bars,
                     fetch_missing=fetch_missing, jobs=jobs, wait=wait, clone_timeout=clone_timeout)
    finally:
        if bars:
            bars.close()
    finish(result)


@click.command()
@click.argument("term", required=False)
@click.option("--repo", "repo_ids", multiple=True, metavar="ID", help="Only this repository (repeatable).")
@table_option("as_of", help="Show the atlas as of DATE (YYYY-MM-DD): sightings whose commit date (UTC) is "
                            "after that day are hidden.")
@click.option("--repos-report", is_flag=True,
              help="Account for every listed repository instead: harvested, or why not (no public "
                   "git URL, not cloned here, corrupt, pull-request ref, no probes).")
@table_option("repos_dir", help="Root of the local clones for --repos-report (default: $ATLAS_REPOS, else "
                                "repos/ beside the data folder).")
@common_options
def timeline(term, repo_ids, as_of, repos_report, repos_dir, data_dir, fmt):
    """When each probe first became visible, oldest first (date, repository, concept, short sha,
    precision). TERM filters by concept id or name, or by probe value.

    \b
    Examples:
      atlas timeline
      atlas timeline hccs --as-of 2025-12-31
      atlas timeline --repos-report
    """
    if repos_report:
        finish(commands.repos_report(repo_ids, repos_dir, fmt, data_dir))
    else:
        finish(commands.timeline(term, repo_ids, as_of, fmt, data_dir))


@click.command()
@table_option("repos_dir")
@click.option("--all", "every", is_flag=True,
              help="List every unchecked pin with its place (default: one line per repository).")
@common_options
def verify(repos_dir, every, data_dir, fmt):
    """Check every evidence pin against the local clones: the counts first, then the broken and
    stale pins with their YAML file:line, then the pins that could not be checked (never counted
    as passed), one line per repository with how to get a clone. Exit 1 if any pin is broken.

    \b
    Examples:
      atlas verify
      atlas verify --all
      ATLAS_REPOS=/path/to/clones atlas verify --format json
    """
    finish(commands.verify(repos_dir, fmt, data_dir, every))
