"""pandas over a run: the README's recipes, from the HDF5 export (through h5py, since
`pd.read_hdf` opens only PyTables files) and from the log itself (`Log.summaries`,
`Log.joint_diagnostics`), checked against each other and against the frames."""

import numpy as np
import pandas as pd
import h5py

import lavender
from test_hdf5_export import cli, COLUMNS


def test_the_summary_and_a_joint_as_data_frames(tmp_path):
    log_path, h5_path = tmp_path / "run.lvlog", tmp_path / "run.h5"
    cli("run", "chain", "--duration", "0.25", "--record", log_path)
    cli("export", log_path, h5_path)
    log = lavender.Log(log_path)
    n = len(log)
    assert n == 60, "0.25 s of 1/240 s substeps"

    # The README's recipe: the per-frame summary as a table indexed by time.
    with h5py.File(h5_path, "r") as f:
        summary = pd.DataFrame({k: f["summary"][k][:] for k in f["summary"]},
                               index=f["time"][:])
        j = 7
        joint = pd.DataFrame(f["joints/diagnostics"][:, j, :],
                             columns=f.attrs["columns"], index=f["time"][:])
    assert summary.shape == (n, 11)
    assert list(joint.columns) == COLUMNS and joint.shape == (n, 8)

    # The same tables straight from the log, without an export.
    from_log = pd.DataFrame(log.summaries(), index=log.times())
    # `Log.summaries` also carries each frame's time and substep (the export's /time and
    # /substep).
    assert sorted(from_log.columns) == sorted(list(summary.columns) + ["substep", "time"])
    np.testing.assert_array_equal(from_log["time"].to_numpy(), summary.index.to_numpy())
    # HDF5 has no boolean type: the export writes `non_finite` as 0/1 bytes.
    assert from_log["non_finite"].dtype == bool and summary["non_finite"].dtype == np.uint8
    as_bool = summary.assign(non_finite=summary["non_finite"].astype(bool))
    pd.testing.assert_frame_equal(from_log[summary.columns], as_bool)
    assert list(lavender.COLUMN_NAMES) == COLUMNS
    joint_from_log = pd.DataFrame(log.joint_diagnostics(j), columns=lavender.COLUMN_NAMES,
                                  index=log.times())
    pd.testing.assert_frame_equal(joint_from_log, joint)

    # Values are the frames' own, bit for bit; the table's worst joint is the frame's.
    for i in [0, n // 2, n - 1]:
        frame = log[i]
        assert summary.index[i] == frame.time
        assert summary["total_energy"].iloc[i] == frame.total_energy
        np.testing.assert_array_equal(joint.iloc[i].to_numpy(), frame.diagnostics[j])
        worst = int(summary["max_anchor_error_joint"].iloc[i])
        assert summary["max_anchor_error"].iloc[i] == frame.diagnostics[worst, 3]
        assert summary["max_anchor_error"].iloc[i] == frame.diagnostics[:, 3].max()
    # What a pandas user asks first: when was the chain's error largest.
    when = summary["max_anchor_error"].idxmax()
    assert 0 < when <= 0.25 + 1e-6, "times are f32 substep lengths summed in f64"
    assert summary["max_anchor_error"].max() > 0
