//! Time per stage of the engine's step, from its `tracing` spans: what `lavender bench
//! --stages` reports for each Lavender row.
//!
//! The engine opens one span per stage of a substep (`prepare_rows`, `solve_velocities`, ...;
//! see `World::substep`) at `TRACE` level. [`StageLayer`] is a `tracing-subscriber` layer
//! that adds up the time inside each of those spans; the binary installs it (with a filter
//! that enables the engine's `TRACE` spans) only when `--stages` is given, so that other runs
//! pay nothing for it. [`reset`] before a measurement and [`take`] after it give the time of
//! each stage over that measurement.

use std::sync::Mutex;
use std::time::Instant;
use tracing::span;
use tracing::Subscriber;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The stages of a substep, in the order the step runs them (the engine's span names).
pub const STAGES: [&str; 5] = [
    "integrate_velocities",
    "prepare_rows",
    "solve_velocities",
    "integrate_positions",
    "project_positions",
];

/// Per stage: spans closed and their total time, ms.
static TOTALS: Mutex<[(u64, f64); STAGES.len()]> = Mutex::new([(0, 0.0); STAGES.len()]);

/// The time of each stage over a measurement.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StageTimes {
    /// Per stage of [`STAGES`]: how many times it ran and its total time, ms.
    pub totals: [(u64, f64); STAGES.len()],
}

impl StageTimes {
    /// Mean time of each stage per run of it (per substep), ms; `None` where it never ran.
    pub fn ms_per_substep(&self) -> [Option<f64>; STAGES.len()] {
        self.totals.map(|(n, ms)| (n > 0).then(|| ms / n as f64))
    }
}

/// Clears the totals.
pub fn reset() {
    *TOTALS.lock().expect("not poisoned") = Default::default();
}

/// The totals since the last [`reset`], which this also does.
pub fn take() -> StageTimes {
    let totals = std::mem::take(&mut *TOTALS.lock().expect("not poisoned"));
    StageTimes { totals }
}

/// When a stage span was entered (kept in the span's extensions).
struct Entered(Instant);

/// The layer that adds up the time inside the engine's stage spans.
#[derive(Debug, Clone, Copy, Default)]
pub struct StageLayer;

fn stage_index(name: &str) -> Option<usize> {
    STAGES.iter().position(|s| *s == name)
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for StageLayer {
    fn on_enter(&self, id: &span::Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            if stage_index(span.name()).is_some() {
                span.extensions_mut().replace(Entered(Instant::now()));
            }
        }
    }

    fn on_exit(&self, id: &span::Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let Some(i) = stage_index(span.name()) else {
            return;
        };
        let entered = span.extensions_mut().remove::<Entered>();
        if let Some(Entered(start)) = entered {
            let ms = start.elapsed().as_secs_f64() * 1e3;
            let mut totals = TOTALS.lock().expect("not poisoned");
            totals[i].0 += 1;
            totals[i].1 += ms;
        }
    }
}

/// The layer with the filter it needs: the engine's spans down to `TRACE`, nothing else.
pub fn layer<S: Subscriber + for<'a> LookupSpan<'a>>() -> impl Layer<S> {
    StageLayer.with_filter(
        tracing_subscriber::filter::Targets::new()
            .with_target("lavender_engine", tracing::Level::TRACE),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use lavender_engine::{Scene, Settings};
    use tracing_subscriber::layer::SubscriberExt;

    /// Stepping a world under the layer times every stage once per substep.
    #[test]
    fn every_stage_is_timed_once_per_substep() {
        let subscriber = tracing_subscriber::registry().with(layer());
        tracing::subscriber::with_default(subscriber, || {
            let scene = Scene::builtin("chain").unwrap();
            let settings = Settings {
                threads: 1,
                ..scene.settings()
            };
            let mut world = scene.build_with(settings).unwrap();
            reset();
            for _ in 0..3 {
                world.step(scene.frame_dt()).unwrap();
            }
            let times = take();
            for (name, (runs, ms)) in STAGES.iter().zip(times.totals) {
                assert_eq!(runs, 12, "{name}: 3 frames of 4 substeps");
                assert!(ms > 0.0, "{name}");
            }
            assert_eq!(take(), StageTimes::default(), "take resets");
        });
    }
}
