"""``oar model show/run``: the summary data, and the errors of a bad command line."""

from __future__ import annotations

import numpy as np
import pytest


def test_model_summary_counts(scenario_models):
    from oar_deploy.cli import model_summary

    dirname, _ = scenario_models["mlp"]
    s = model_summary(dirname)
    assert [i["name"] for i in s["inputs"]] == ["img"]
    assert s["inputs"][0]["shape"] == [-1, 784] and s["inputs"][0]["dtype"] == "float32"
    assert s["outputs"][0]["shape"] == [-1, 10]
    assert s["ops"]["mul"] == 3 and s["ops"]["dropout"] == 1
    assert s["num_parameters"] == 784 * 64 + 64 + 64 * 32 + 32 + 32 * 10 + 10
    assert s["parameter_bytes"] == 4 * s["num_parameters"]


def test_model_show_json_and_run_errors(scenario_models, tmp_path, capsys):
    import json

    from oar.cli import main

    dirname, feeds = scenario_models["fit_a_line"]
    assert main(["model", "show", dirname, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["num_ops"] == 2  # mul, elementwise_add
    np.save(tmp_path / "x.npy", feeds(np.random.default_rng(0), 2)["x"])
    assert main(["model", "run", dirname, "--input", f"wrong={tmp_path / 'x.npy'}"]) == 2
    assert "missing ['x']" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="name=file.npy"):
        main(["model", "run", dirname, "--input", "x"])
    assert main(["model", "run", dirname, "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    assert "float32 [2, 1]" in capsys.readouterr().out
    assert main(["model"]) == 2
