"""Command-line options of the SciFact benchmarks that run the stack end to end (`review`,
`sourcelist`, `verify_e2e`): which claims (`--split`) and the services' settings (`--env`)."""

from __future__ import annotations

import argparse


def add_split(
    parser: argparse.ArgumentParser, dev: str = "the dev claims (once per shipped setup)"
) -> None:
    """`--split train` (default): the held-out fold 0 of SciFact's train claims, which the shipped
    judgement models never trained on; `--split dev`: the dev claims, described by `dev`."""
    parser.add_argument(
        "--split",
        choices=["train", "dev"],
        default="train",
        help=f"train: held-out fold 0 of the train claims; dev: {dev}",
    )


def add_env(parser: argparse.ArgumentParser) -> None:
    """`--env KEY=VALUE`, repeatable: a service setting for the run (`service_env` reads them)."""
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a service setting for this run",
    )


def service_env(settings: list[str]) -> dict[str, str]:
    """The services' extra environment from `--env` values: KEY=VALUE → {KEY: VALUE}."""
    return dict(item.split("=", 1) for item in settings)
