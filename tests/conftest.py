"""Each test gets fresh default programs, a fresh global scope and fresh unique names."""

import pytest
from oar.framework import program as _program
from oar.framework import unique_name
from oar.scope import Scope, _switch_scope


@pytest.fixture(autouse=True)
def fresh_oar_state():
    old_main = _program.switch_main_program(_program.Program())
    old_startup = _program.switch_startup_program(_program.Program())
    old_scope = _switch_scope(Scope())
    with unique_name.guard():
        yield
    _program.switch_main_program(old_main)
    _program.switch_startup_program(old_startup)
    _switch_scope(old_scope)
