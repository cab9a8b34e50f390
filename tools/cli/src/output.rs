//! Printing, progress bars, logging setup and the exit path shared by the subcommands.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};

/// The build's identity: version, target features (they change results bit for bit) and SIMD
/// lanes, as `--version` and the bench header print it.
pub fn build_identity() -> String {
    format!(
        "{} (target features {}, {} SIMD lanes)",
        lavender_engine::VERSION,
        lavender_engine::target_features(),
        lavender_engine::lanes::WIDE_LANES
    )
}

/// Sets up `tracing` from `RUST_LOG` (default: warnings); span close events carry the time
/// spent in each step stage when the engine's spans are enabled.
pub fn init_tracing(stage_times: bool) {
    use tracing_subscriber::fmt::format::FmtSpan;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;
    let (filter, plain) = match tracing_subscriber::EnvFilter::try_from_default_env() {
        Ok(filter) => (filter, false),
        Err(_) => (tracing_subscriber::EnvFilter::new("warn"), true),
    };
    let log = tracing_subscriber::fmt::layer()
        .with_span_events(FmtSpan::CLOSE)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    // Without RUST_LOG only warnings show, and they read as the commands' own `warning:`
    // lines (QA 2026-12-07: a scene's warnings came as timestamped log records beside them).
    let log = match plain {
        true => log.event_format(Plain).with_filter(filter).boxed(),
        false => log.with_filter(filter).boxed(),
    };
    // `lavender bench --stages`: the engine's stage spans timed (only then: enabling its
    // `TRACE` spans costs a little on every substep).
    let stages = stage_times.then(lavender_bench::stages::layer);
    tracing_subscriber::registry().with(log).with(stages).init();
}

/// Formats a `tracing` event as a command's own message: `warning: ...` (`error: ...` for an
/// error), the event's fields after it, no time or source.
struct Plain;

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for Plain
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let label = match *event.metadata().level() {
            tracing::Level::ERROR => "error",
            tracing::Level::WARN => "warning",
            _ => "note",
        };
        write!(writer, "{label}: ")?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Writes `text` to standard output; a closed pipe (`lavender ... | head`) ends quietly.
pub fn emit(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => Ok(other?),
    }
}

/// Prints a JSON value on one line.
pub fn emit_json(value: &serde_json::Value) -> anyhow::Result<()> {
    JSON_EMITTED.store(true, std::sync::atomic::Ordering::Relaxed);
    emit(&format!("{value}\n"))
}

/// Whether a JSON object went to standard output (then a failure adds none: one object per
/// command, except `bench`'s one per line).
static JSON_EMITTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// How a failed command reports itself on standard output under `--json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonErrors {
    /// No `--json`: the error goes to standard error only.
    Off,
    /// One JSON object per command: an error object unless the command already printed one.
    Object,
    /// JSON lines (`bench`): an error line after whatever rows were printed.
    Lines,
}

/// Exits on a command line clap cannot parse (or on `--help`/`--version`, which clap also
/// reports this way). Under `--json` a usage error is also a JSON error object on standard
/// output, as every other failure is.
pub fn exit_on_usage_error(e: clap::Error) -> ! {
    use clap::error::ErrorKind as K;
    let usage = !matches!(e.kind(), K::DisplayHelp | K::DisplayVersion)
        && !matches!(e.kind(), K::DisplayHelpOnMissingArgumentOrSubcommand);
    if usage && std::env::args_os().any(|a| a == "--json") {
        let text = e.render().to_string();
        let message = usage_message(&text);
        let value = serde_json::json!({
            "error": {
                "message": message,
                "causes": [],
                "usage": text.trim_end(),
                "exit_code": e.exit_code(),
            }
        });
        let _ = emit_json(&value);
    }
    e.exit()
}

/// The message of clap's rendered usage error `text`: its first paragraph on one line, so
/// that what it lists on the lines after the first (the missing arguments) is in it (QA
/// 2026-12-07: "the following required arguments were not provided:", the names only in
/// `usage`).
fn usage_message(text: &str) -> String {
    let paragraph = text.split("\n\n").next().unwrap_or("");
    let mut lines = paragraph.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("").trim_start_matches("error: ");
    let listed: Vec<&str> = lines.collect();
    if listed.is_empty() {
        first.to_string()
    } else {
        format!("{first} {}", listed.join(", "))
    }
}

/// `{"error": {"message", "causes": [...], "exit_code"}}`: what a `--json` consumer reads
/// when a command fails (the same text as on standard error).
pub fn error_json(e: &anyhow::Error, exit_code: i32) -> serde_json::Value {
    let causes = causes(e);
    serde_json::json!({
        "error": {
            "message": e.to_string(),
            "causes": causes,
            "exit_code": exit_code,
        }
    })
}

/// What an interrupted `run` or `resume` left at its recording's path, as the end of its
/// message ("" without a recording).
pub fn interrupted_log(log: Option<&lavender_replay::LogSummary>) -> String {
    match log {
        Some(l) if l.frames == 0 => {
            format!(
                "; nothing was recorded, {} was left as it was",
                l.path.display()
            )
        }
        Some(l) => format!(
            "; {} holds its {} recorded substeps, finished and readable",
            l.path.display(),
            l.frames
        ),
        None => String::new(),
    }
}

/// What shows where a recorded run went non-finite, by the recording's format: `scrub` reads
/// Lavender logs only.
pub fn failure_viewer(path: &std::path::Path) -> &'static str {
    match lavender_replay::recorder::OutputKind::of(path) {
        lavender_replay::recorder::OutputKind::Log => "`lavender scrub` shows where",
        _ => "its `/summary` datasets show where (h5py)",
    }
}

/// A 64-bit hash as JSON and messages show it: `0x` and sixteen hex digits (exact where a
/// JSON reader holds numbers as doubles: jq, JavaScript).
pub fn hex64(hash: u64) -> String {
    format!("{hash:#018x}")
}

/// `n` and the noun, plural unless `n` is 1: "1 frame", "4 frames", "2 velocity passes",
/// "3 bodies".
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let consonant_y = noun
        .strip_suffix('y')
        .and_then(|stem| stem.chars().last())
        .is_some_and(|c| !"aeiou".contains(c));
    match n.into() {
        1 => format!("1 {noun}"),
        n if noun.ends_with('s') => format!("{n} {noun}es"),
        n if consonant_y => format!("{n} {}ies", &noun[..noun.len() - 1]),
        n => format!("{n} {noun}s"),
    }
}

/// A progress bar on standard error when it is a terminal, hidden otherwise.
pub fn progress(len: u64, what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({left})")
            .expect("valid template")
            .with_key("left", time_left)
            .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}

/// A spinner on standard error (a terminal only) for work of unknown length, shown only once
/// it has taken `after`: opening a log is instant from its index but reads a killed writer's
/// log whole, seconds for gigabytes (QA 2026-12-08: silent). It goes when dropped.
pub fn slow_work_spinner(message: String, after: std::time::Duration) -> SlowWorkSpinner {
    use std::sync::atomic::{AtomicBool, Ordering};
    let done = std::sync::Arc::new(AtomicBool::new(false));
    if !std::io::stderr().is_terminal() {
        return SlowWorkSpinner { done, thread: None };
    }
    let flag = done.clone();
    let thread = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let tick = std::time::Duration::from_millis(50);
        while start.elapsed() < after {
            if flag.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(tick);
        }
        let spinner = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        spinner.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("valid template"));
        spinner.set_message(message);
        spinner.enable_steady_tick(std::time::Duration::from_millis(100));
        while !flag.load(Ordering::Relaxed) {
            std::thread::sleep(tick);
        }
        spinner.finish_and_clear();
    });
    SlowWorkSpinner {
        done,
        thread: Some(thread),
    }
}

/// See [`slow_work_spinner`].
pub struct SlowWorkSpinner {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for SlowWorkSpinner {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The progress bar's estimate of the time left. Before the first item is done there is
/// nothing to estimate from, and indicatif's `{eta}` would read "0s left" (QA 2026-12-07).
fn time_left(state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write) {
    let _ = w.write_str(&time_left_text(state.pos(), state.eta()));
}

fn time_left_text(done: u64, eta: std::time::Duration) -> String {
    if done == 0 {
        "estimating time left".into()
    } else {
        format!("{:#} left", indicatif::HumanDuration(eta))
    }
}

/// Exits with 0 on success; prints the error chain and exits with 2 otherwise.
pub fn finish(result: anyhow::Result<()>, json: JsonErrors) {
    if let Err(e) = result {
        let interrupted = e.downcast_ref::<crate::interrupt::Interrupted>().is_some()
            || matches!(
                e.downcast_ref::<lavender_replay::ReplayError>(),
                Some(lavender_replay::ReplayError::Interrupted { .. })
            );
        let report = error_report(&e);
        if interrupted {
            // A stop asked for is no error (QA 2026-12-07: a clean Ctrl-C of a recording read
            // "error: interrupted ..."): its message says what stopped.
            eprintln!("{}", report.trim_start_matches("error: "));
        } else {
            eprintln!("{report}");
        }
        // A run over its --max-anchor-error failed its check, as `diff` finding a
        // divergence: exit code 1, distinct from unusable input or a failed step (2).
        let failed_check = e.downcast_ref::<crate::run::ToleranceExceeded>().is_some();
        let code = if interrupted {
            crate::interrupt::EXIT_CODE
        } else if failed_check {
            1
        } else {
            2
        };
        let already = JSON_EMITTED.load(std::sync::atomic::Ordering::Relaxed);
        if json == JsonErrors::Lines || (json == JsonErrors::Object && !already) {
            // Best effort: standard output may be the closed pipe that failed the command.
            let _ = emit_json(&error_json(&e, code));
        }
        std::process::exit(code);
    }
}

/// The error and its causes, one per line; a cause whose text the line before already
/// ends with (an I/O error its wrapper quotes) is not repeated.
pub fn error_report(e: &anyhow::Error) -> String {
    let mut out = format!("error: {e}");
    for cause in causes(e) {
        out.push_str(&format!("\n  caused by: {cause}"));
    }
    out
}

/// The causes of `e` worth a line: a cause whose text the one before already ends with (an
/// I/O error its wrapper quotes) is left out. Standard error and the JSON error say the same.
fn causes(e: &anyhow::Error) -> Vec<String> {
    let mut out = Vec::new();
    let mut last = e.to_string();
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !last.ends_with(&text) {
            out.push(text.clone());
        }
        last = text;
    }
    out
}

/// A command-line whole number (substeps, counts, passes, threads): clap's own message for
/// `--from -1` was "invalid digit found in string"; this one says what to give.
pub fn whole<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    // `-0` is 0 (QA 2026-12-07: it was called negative).
    let zeros = |t: &str| !t.is_empty() && t.bytes().all(|b| b == b'0');
    let text_as_given = text;
    let text = match text.strip_prefix('-') {
        Some(rest) if zeros(rest) => rest,
        _ => text,
    };
    text.parse::<T>().map_err(|_| {
        let text = text_as_given;
        let digits = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
        // No minimum in the message: some options take 0, others start at 1 (QA 2026-12-07:
        // `--every -1` was told "0 or more", then 0 was refused).
        if digits {
            format!("`{text}` is too large for this option")
        } else if text.starts_with('-') {
            format!("`{text}` is negative: give a whole number")
        } else {
            format!("`{text}` is not a whole number: give one in digits, e.g. 12")
        }
    })
}

/// A command-line decimal number (seconds, gains, thresholds): clap's own message for
/// `--dt abc` was "invalid float literal" (QA 2026-12-08); this one says what to give. What
/// values the option takes is checked where it is used.
pub fn number<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    text.parse::<T>()
        .map_err(|_| format!("`{text}` is not a number: give one in digits, e.g. 0.5 or 1e-3"))
}

/// A comparison tolerance (`diff --atol`, `--rtol`): a finite number, 0 or more.
pub fn tolerance(text: &str) -> Result<f64, String> {
    match number::<f64>(text)? {
        x if x.is_finite() && x >= 0.0 => Ok(x),
        _ => Err(format!(
            "`{text}` is not a tolerance: give a finite number, 0 or more, e.g. 1e-6"
        )),
    }
}

/// A count of things to show: a whole number, 1 or more (QA 2026-12-07: `--top 0` printed a
/// table header over no rows).
pub fn count_to_show(text: &str) -> Result<usize, String> {
    match whole::<usize>(text)? {
        0 => Err("`0` would show nothing: give 1 or more".to_string()),
        n => Ok(n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_says_it_is_estimating_until_the_first_item_is_done() {
        let eta = std::time::Duration::from_secs(0);
        assert_eq!(time_left_text(0, eta), "estimating time left");
        assert_eq!(time_left_text(1, eta), "0s left");
        let eta = std::time::Duration::from_secs(75);
        assert_eq!(time_left_text(0, eta), "estimating time left");
        assert_eq!(time_left_text(40, eta), "75s left");
    }

    #[test]
    fn counts_agree_with_their_numbers() {
        assert_eq!(count(1u32, "velocity pass"), "1 velocity pass");
        assert_eq!(count(8u32, "velocity pass"), "8 velocity passes");
        assert_eq!(count(0u64, "frame"), "0 frames");
        assert_eq!(count(1u64, "body"), "1 body");
        assert_eq!(count(3u64, "body"), "3 bodies");
        assert_eq!(count(2u64, "key"), "2 keys");
        assert_eq!(count(1u64, "joint"), "1 joint");
    }

    #[test]
    fn whole_numbers_are_read_as_typed_and_refused_saying_why() {
        assert_eq!(whole::<u64>("12"), Ok(12));
        assert_eq!(whole::<u64>("-0"), Ok(0));
        assert_eq!(whole::<u64>("-000"), Ok(0));
        let says = |text: &str| whole::<u64>(text).unwrap_err();
        assert_eq!(says("-1"), "`-1` is negative: give a whole number");
        assert!(says("1.5").contains("is not a whole number"));
        assert!(says(" 5").contains("is not a whole number"));
        assert!(says("99999999999999999999").contains("too large"));
        assert!(!says("-1").contains("0 or more"));
    }

    /// QA (2026-12-07): under `--json` a missing argument's name was only in `usage`.
    #[test]
    fn a_usage_messages_listed_arguments_are_in_it() {
        let missing = "error: the following required arguments were not provided:\n  \
                       <OUTPUT>\n  --from <SUBSTEP>\n\nUsage: lavender export <LOG> \
                       <OUTPUT>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            usage_message(missing),
            "the following required arguments were not provided: <OUTPUT>, --from <SUBSTEP>"
        );
        let one_line = "error: unexpected argument '--frm' found\n\n  tip: a similar \
                        argument exists: '--from'\n\nUsage: lavender export\n";
        assert_eq!(usage_message(one_line), "unexpected argument '--frm' found");
    }

    #[test]
    fn a_cause_the_message_already_quotes_is_not_repeated() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(lavender_replay::ReplayError::Io {
            action: "opening",
            path: "x.lvlog".into(),
            source: io,
        })
        .context("cannot read the log x.lvlog");
        assert_eq!(
            error_report(&e),
            "error: cannot read the log x.lvlog\n  caused by: opening x.lvlog: No such file"
        );
    }
}
