"""A pytest plugin for running a project's device-parameterised tests on tpsim.

Loaded by every pytest that ``torchport simulate`` starts (a ``pytest11`` entry
point of the generated autoload folder, see _child.py); it does nothing unless
asked. ``--tpsim-param NAME`` (or ``$TORCHPORT_SIM_PYTEST_PARAM``, names
separated by commas) adds the simulated device to every parametrisation of
the argument ``NAME`` that a test or conftest makes, however the project
builds its device list (``@pytest.mark.parametrize("device", ...)``, or a
conftest's ``pytest_generate_tests`` that knows only ``cuda``, ``tpu``,
``mps``): the device is added in the form the list uses (a ``torch.device``
or a string) with the id ``tpsim``. ``--tpsim-fixture NAME`` (or
``$TORCHPORT_SIM_PYTEST_FIXTURE``) makes the fixture ``NAME`` the simulated
device (``torch.device("tpsim", 0)``), for a project whose ``device`` fixture
looks its value up among the devices it knows and skips the others. A
project that takes the device from a command-line option that accepts any
device string needs no plugin (``--device tpsim``); one that reads an
environment variable can be given ``$TORCHPORT_SIM_DEVICE`` (``tpsim``).
"""

from __future__ import annotations

import os

import pytest

NAME = "tpsim"
OPTION = "--tpsim-param"
ENV = "TORCHPORT_SIM_PYTEST_PARAM"
FIXTURE_OPTION = "--tpsim-fixture"
FIXTURE_ENV = "TORCHPORT_SIM_PYTEST_FIXTURE"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("torchport simulate")
    group.addoption(
        OPTION,
        action="append",
        default=[],
        metavar="NAME",
        help=f"add the simulated {NAME} device to every parametrisation of the "
        f"test argument NAME (repeatable; also ${ENV}, comma-separated)",
    )
    group.addoption(
        FIXTURE_OPTION,
        action="append",
        default=[],
        metavar="NAME",
        help=f"make the fixture NAME the simulated {NAME} device (repeatable; "
        f"also ${FIXTURE_ENV}, comma-separated)",
    )


def _names(config, option: str = OPTION, env: str = ENV) -> set[str]:
    names = set(config.getoption(option) or [])
    names.update(n.strip() for n in os.environ.get(env, "").split(",") if n.strip())
    return names


@pytest.hookimpl(tryfirst=True)
def pytest_fixture_setup(fixturedef, request):
    if fixturedef.argname not in _names(request.config, FIXTURE_OPTION, FIXTURE_ENV):
        return None
    import torch

    value = torch.device(NAME, 0)  # indexed, as tensors' devices are
    # What pytest's own implementation records, so teardown and caching work.
    fixturedef.cached_result = (value, fixturedef.cache_key(request), None)
    return value


def _simulated_like(values: list):
    """The simulated device in the form of the values, or None if it is there."""
    import torch

    for value in values:
        value = getattr(value, "values", [value])[0]  # a pytest.param
        if str(value).split(":")[0] == NAME:
            return None
    devices = [v for v in values if isinstance(v, torch.device)]
    return torch.device(NAME) if devices or not values else NAME


@pytest.hookimpl(hookwrapper=True)
def pytest_generate_tests(metafunc):
    names = _names(metafunc.config)
    if not names:
        yield
        return
    original = metafunc.parametrize

    def parametrize(argnames, argvalues, *args, **kwargs):
        single = argnames if isinstance(argnames, str) else None
        if single in names and "," not in single and "indirect" not in kwargs:
            values = list(argvalues)
            extra = _simulated_like(values)
            if extra is not None:
                ids = kwargs.get("ids")
                if isinstance(ids, (list, tuple)):
                    kwargs["ids"] = list(ids) + [NAME]
                argvalues = values + [pytest.param(extra, id=NAME)]
        return original(argnames, argvalues, *args, **kwargs)

    metafunc.parametrize = parametrize
    try:
        yield
    finally:
        metafunc.parametrize = original
