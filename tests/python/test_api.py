"""Every public name of the module has a docstring, and the package says what it needs."""

from __future__ import annotations

import inspect

import c3scope


def test_every_public_name_is_documented():
    missing = []
    for name in c3scope.__all__:
        obj = getattr(c3scope, name)
        if name == "__version__":
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for attr, member in vars(obj).items():
                if attr.startswith("_") or not callable(member) and not isinstance(member, property):
                    continue
                if not (getattr(member, "__doc__", "") or "").strip():
                    missing.append(f"{name}.{attr}")
    assert not missing, missing


def test_version_and_errors():
    assert c3scope.__version__
    assert issubclass(c3scope.Error, Exception)
    assert c3scope.UsageError.__module__ == "c3scope"
