"""lab.gc_policy: freeze once per batch of new imports, never freeze garbage."""

from __future__ import annotations

import gc
import sys
import types
import weakref

from lab.gc_policy import freeze_new_imports


class _Node:
    pass


def test_freezes_only_after_new_imports_and_collects_garbage_first():
    freeze_new_imports()
    assert freeze_new_imports() is False  # nothing imported since

    # A garbage cycle made before the freeze: collected, not kept forever.
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b

    name = "_kl_lab_test_gc_policy_module"
    sys.modules[name] = types.ModuleType(name)
    try:
        assert freeze_new_imports() is True
        assert gc.get_freeze_count() > 0
        assert gone() is None
        assert freeze_new_imports() is False
    finally:
        del sys.modules[name]


def test_a_process_freezes_a_bounded_number_of_times(monkeypatch):
    from lab import gc_policy

    monkeypatch.setattr(gc_policy, "freezes", gc_policy.MAX_FREEZES)
    name = "_kl_lab_test_gc_policy_module_2"
    sys.modules[name] = types.ModuleType(name)
    try:
        assert freeze_new_imports() is False
    finally:
        del sys.modules[name]
