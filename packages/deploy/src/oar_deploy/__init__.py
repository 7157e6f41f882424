"""oar-deploy: the Fluid 1.8 inference predictor, inference passes, ONNX export, ``oar model``.

The plugin entry point is :mod:`oar_deploy.plugin`. ``oar`` is imported first
so that importing an ``oar_deploy`` module directly sets the plugin manager up.
"""

import oar  # noqa: F401

__version__ = "0.1.0"
