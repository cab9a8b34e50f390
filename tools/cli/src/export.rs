//! `lavender export`: copy a run log (or part of it) to HDF5, or to a finished `.lvlog`.

use crate::output::{emit, emit_json, progress};
use crate::run::human_bytes;
use anyhow::bail;
use lavender_replay::h5::{export_interruptible, ExportRange};
use std::path::PathBuf;

/// Export a run log to HDF5, or copy it to a finished `.lvlog`
///
/// HDF5 for h5py, MATLAB or pandas (through h5py): /time, /substep, /bodies/pose
/// (N x B x 7), /bodies/velocity (N x B x 6), /joints/diagnostics (N x J x 8), /summary/*,
/// with names, columns, units, settings, scene hash and engine version as attributes. To a
/// `.lvlog`: a finished copy with its footer (a killed writer's log, which every command
/// otherwise scans whole, then opens from its index), or a range of a long run; it diffs
/// identical to the original over its frames (`diff --overlap` for a range) and resumes from
/// its keyframes. A range's spike index is judged on the frames it holds: its baselines start
/// afresh at `--from`, so scrub the original for spikes in the range's first window.
#[derive(Debug, clap::Args)]
#[command(
    allow_negative_numbers = true,
    after_help = "Examples:\n  lavender export run.lvlog run.h5\n  lavender export run.lvlog part.h5 --from 1000 --to 2000 --every 4\n  lavender export killed.lvlog fixed.lvlog     a killed writer's log, finished with its footer\n  lavender export run.lvlog spike.lvlog --from 4000 --to 4400\n                                           the stretch that matters, as a log of its own\n                                           (it resumes from its first substep: lavender resume spike.lvlog --from 4000)\n  h5dump -H run.h5                         lists the layout\n  python3 -c \"import h5py; f = h5py.File('run.h5'); print(f['joints/diagnostics'].shape)\""
)]
pub struct Args {
    /// The run log to read (written by `lavender run --record`).
    log: PathBuf,
    /// The file to write: HDF5 (`.h5` or `.hdf5`) or a Lavender log (`.lvlog`); replaced if
    /// it exists, and only once the export has succeeded: a failed export leaves it as it was.
    output: PathBuf,
    /// First substep to export (inclusive; default: the first one).
    #[arg(long, value_parser = crate::output::whole::<u64>)]
    from: Option<u64>,
    /// Last substep to export (inclusive; default: the last one).
    #[arg(long, value_parser = crate::output::whole::<u64>)]
    to: Option<u64>,
    /// Export every K-th recorded substep of the range (a log holds one frame per substep:
    /// with 4 substeps per 1/60 s step, 240 is one a second), starting with its first (HDF5
    /// only: a `.lvlog` holds every substep of its range).
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = crate::output::whole::<u64>)]
    every: u64,
    /// Print what was written as one JSON object.
    #[arg(long)]
    json: bool,
}

pub fn main(args: Args) -> anyhow::Result<()> {
    if args.every == 0 {
        bail!("--every must be at least 1");
    }
    let to = args.to.unwrap_or(u64::MAX);
    let from = args.from.unwrap_or(0);
    if to < from {
        bail!("--to {to} is before --from {from}");
    }
    let reader = crate::scrub::open_log(&args.log)?;
    let range = ExportRange {
        from,
        to,
        every: args.every,
    };
    // The bar counts the log's frames in the range (QA 2026-12-07: it counted the whole log,
    // and a range export ended at 2000/4800); an empty range is the export's error, below.
    let frames = range.frames_of(&reader).ok();
    let in_range = frames.as_ref().map_or(0, |r| r.len());
    let bar = progress(in_range as u64, "exporting");
    // A Ctrl-C stops the export cleanly: its temporary file removed, the output untouched.
    crate::interrupt::stop_cleanly();
    crate::interrupt::writing(&args.output);
    let stop = crate::interrupt::flag();
    let to_log = lavender_replay::files::extension(&args.output).as_deref() == Some("lvlog");
    if !to_log {
        if let Err(e) = lavender_replay::files::check_hdf5_extension(&args.output) {
            bail!("{e}, or NAME.lvlog for a finished copy of the log");
        }
    }
    let progress = |done: usize| bar.set_position(done as u64);
    let started = std::time::Instant::now();
    let exported = if to_log {
        lavender_replay::copy::copy_interruptible(&reader, &args.output, range, progress, stop)
    } else {
        export_interruptible(&reader, &args.output, range, progress, stop)
    };
    let summary = exported.map_err(|e| {
        // A stop asked for reads as the other commands' ("interrupted ..."), one statement
        // and not an error's chain (QA 2026-12-07: "exporting ... / caused by: ... was
        // interrupted", an error report without its "error:").
        if let lavender_replay::ReplayError::Interrupted { path } = &e {
            return anyhow::Error::new(crate::interrupt::Interrupted(format!(
                "interrupted while exporting {} to {}: nothing was written there (an earlier \
                 file at that path is kept as it was)",
                args.log.display(),
                path.display()
            )));
        }
        // A corrupt frame: the frames on either side of it can still be exported.
        let hint = match &e {
            lavender_replay::ReplayError::CorruptFrame { index, .. } => {
                // The nearest readable frames, past any corrupt neighbours (QA 2026-12-07: with
                // two corrupt frames in a row the hint named the other one).
                let readable = |i: &usize| reader.frame(*i).is_ok();
                let substep = |i: usize| reader.index()[i].summary.substep;
                let before = (0..*index).rev().find(readable).map(substep);
                let after = (index + 1..reader.len()).find(readable).map(substep);
                either_side(before, after)
            }
            lavender_replay::ReplayError::SkippedRecord { record, .. } => {
                either_side(record.after_substep, Some(record.before_substep))
            }
            _ => String::new(),
        };
        anyhow::Error::new(e).context(format!(
            "exporting {} to {}{hint}",
            args.log.display(),
            args.output.display()
        ))
    })?;
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    // Past the end is "to the end", said (QA 2026-12-07: it was clamped without a word);
    // before the start, "from the start" (QA 2026-12-07: the same, for a log that starts
    // later, a stretch or a resumed run).
    let first = reader.index().first().map(|m| m.summary.substep);
    if let (Some(from), Some(first)) = (args.from, first) {
        if from < first {
            eprintln!(
                "note: --from {from} is before the log's first substep, {first}; exported from it"
            );
        }
    }
    let last = reader.index().last().map(|m| m.summary.substep);
    if let (Some(to), Some(last)) = (args.to, last) {
        if to > last {
            eprintln!("note: --to {to} is past the log's last substep, {last}; exported up to it");
        }
    }
    // The substeps exported: the range's first frame, then every K-th (QA 2026-12-07: the
    // JSON said how many frames, not which).
    let substeps = frames.filter(|r| !r.is_empty()).map(|r| {
        let last = r.start + (r.len() - 1) / args.every as usize * args.every as usize;
        let substep = |i: usize| reader.index()[i].summary.substep;
        (substep(r.start), substep(last))
    });
    let format = if to_log { "lvlog" } else { "hdf5" };
    if args.json {
        emit_json(&serde_json::json!({
            "path": summary.path,
            "format": format,
            "frames": summary.frames,
            "bytes": summary.bytes,
            "first_substep": substeps.map(|s| s.0),
            "last_substep": substeps.map(|s| s.1),
            "every": args.every,
            "wall_seconds": wall,
        }))
    } else {
        let span = substeps.map_or(String::new(), |(a, b)| {
            let every = if args.every > 1 {
                format!(", every {}", args.every)
            } else {
                String::new()
            };
            format!(" (substeps {a} to {b}{every})")
        });
        emit(&format!(
            "exported {} frame{}{span} to {}: {} in {wall:.2} s\n",
            summary.frames,
            if summary.frames == 1 { "" } else { "s" },
            summary.path.display(),
            human_bytes(summary.bytes)
        ))
    }
}

/// The ranges an export can still write around damage between substeps `before` and `after`
/// (the readable frames on either side), as a hint for the error.
fn either_side(before: Option<u64>, after: Option<u64>) -> String {
    match (before, after) {
        (Some(b), Some(a)) => {
            format!(" (the frames on either side can be exported: --to {b}, or --from {a})")
        }
        (Some(b), None) => format!(" (the frames before it can be: --to {b})"),
        (None, Some(a)) => format!(" (the frames after it can be: --from {a})"),
        (None, None) => String::new(),
    }
}
