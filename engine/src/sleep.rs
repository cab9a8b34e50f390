//! Sleep state: per-body rest timers and sleep flags, and the `update_sleep` stage.
//!
//! The rule (documented in [`crate::schedule::islands`]) is applied per island: an island
//! sleeps exactly when the least rest timer of its bodies has reached `time_to_sleep`. The
//! timers of a sleeping island are frozen, and waking resets them to zero, so between
//! substeps "asleep" and "every timer of the island >= `time_to_sleep`" are the same thing:
//! the timers alone (the tail of [`crate::World::solver_state`]) determine who sleeps.

use crate::bodies::{Bodies, BodyKind};
use crate::parallel::Exec;
use crate::schedule::Islands;
use crate::settings::Settings;
use glam::Vec3;

/// Per-body sleep state and the scratch of the island pass (kept to avoid allocating).
#[derive(Debug, Clone, Default)]
pub(crate) struct Sleep {
    /// Seconds each dynamic body has stayed below both speed thresholds (frozen while its
    /// island sleeps; always 0 for static and kinematic bodies and with sleeping off).
    pub timer: Vec<f32>,
    /// Whether each body sleeps (always false for static and kinematic bodies).
    pub asleep: Vec<bool>,
    /// Number of sleeping bodies.
    pub sleeping_bodies: usize,
    /// Number of sleeping islands.
    pub sleeping_islands: usize,
    /// Scratch, per island: the least timer of its bodies.
    island_min: Vec<f32>,
}

impl Sleep {
    /// Appends the state of a new (awake) body.
    pub fn push(&mut self) {
        self.timer.push(0.0);
        self.asleep.push(false);
    }

    /// Byte footprint per body (timer, flag, and their rollback copy).
    pub const BYTES_PER_BODY: usize = 2 * (std::mem::size_of::<f32>() + 1);

    /// Wakes every body and resets every timer; returns whether any body was asleep.
    pub fn wake_all(&mut self) -> bool {
        self.timer.fill(0.0);
        let any = self.sleeping_bodies > 0;
        self.asleep.fill(false);
        self.sleeping_bodies = 0;
        self.sleeping_islands = 0;
        any
    }

    /// Wakes the islands `which` (ids of `islands`), resetting their bodies' timers; returns
    /// whether any of their bodies was asleep.
    pub fn wake_islands(&mut self, islands: &Islands, which: &[u32]) -> bool {
        let mut any = false;
        for (i, &island) in islands.island_of.iter().enumerate() {
            if island != Islands::NONE && which.contains(&island) {
                self.timer[i] = 0.0;
                any |= std::mem::take(&mut self.asleep[i]);
            }
        }
        if any {
            self.recount(islands);
        }
        any
    }

    /// The `update_sleep` stage, after the poses are projected: advances the rest timers of
    /// the awake dynamic bodies by `h` (or resets them to 0 above a threshold), resets the
    /// timer of a dynamic body jointed to a moving kinematic body (`driven` joints), then puts
    /// islands to sleep or wakes them ([`Sleep::settle`]). Returns whether any island changed
    /// state (the schedule must then be rebuilt).
    pub fn update(
        &mut self,
        exec: Exec,
        bodies: &mut Bodies,
        islands: &Islands,
        driven: &[(u32, u32)],
        settings: &Settings,
        h: f32,
    ) -> bool {
        let lin2 = settings.sleep_linear_speed * settings.sleep_linear_speed;
        let ang2 = settings.sleep_angular_speed * settings.sleep_angular_speed;
        {
            let (kind, asleep) = (&bodies.kind, &self.asleep);
            let (v, w) = (&bodies.linear_velocity, &bodies.angular_velocity);
            exec.for_each_indexed(&mut self.timer, &|i, t| {
                if kind[i] != BodyKind::Dynamic || asleep[i] {
                    return;
                }
                let moving = v[i].length_squared() > lin2 || w[i].length_squared() > ang2;
                *t = if moving { 0.0 } else { *t + h };
            });
        }
        for &(kinematic, dynamic) in driven {
            let k = kinematic as usize;
            if bodies.linear_velocity[k] != Vec3::ZERO || bodies.angular_velocity[k] != Vec3::ZERO {
                self.timer[dynamic as usize] = 0.0;
            }
        }
        self.settle(bodies, islands, settings.time_to_sleep)
    }

    /// Puts to sleep every awake island whose bodies' timers are all `>= time_to_sleep`
    /// (zeroing their velocities) and wakes every sleeping island with a timer below it
    /// (resetting its timers). Returns whether any island changed state.
    pub fn settle(&mut self, bodies: &mut Bodies, islands: &Islands, time_to_sleep: f32) -> bool {
        self.island_min.clear();
        self.island_min.resize(islands.count, f32::INFINITY);
        for (i, &island) in islands.island_of.iter().enumerate() {
            if island != Islands::NONE {
                let m = &mut self.island_min[island as usize];
                *m = m.min(self.timer[i]);
            }
        }
        let mut changed = false;
        for (i, &island) in islands.island_of.iter().enumerate() {
            if island == Islands::NONE {
                continue;
            }
            let sleep = self.island_min[island as usize] >= time_to_sleep;
            if sleep == self.asleep[i] {
                continue;
            }
            changed = true;
            self.asleep[i] = sleep;
            if sleep {
                bodies.linear_velocity[i] = Vec3::ZERO;
                bodies.angular_velocity[i] = Vec3::ZERO;
            } else {
                self.timer[i] = 0.0;
            }
        }
        if changed {
            self.recount(islands);
        }
        changed
    }

    /// Recounts the sleeping bodies and islands.
    pub fn recount(&mut self, islands: &Islands) {
        self.sleeping_bodies = self.asleep.iter().filter(|&&a| a).count();
        // An island's lowest body comes first; count each island once, at its first body.
        let mut seen = 0;
        let mut next = 0u32;
        for (i, &island) in islands.island_of.iter().enumerate() {
            if island != Islands::NONE && island == next {
                next += 1;
                seen += usize::from(self.asleep[i]);
            }
        }
        self.sleeping_islands = seen;
    }
}
