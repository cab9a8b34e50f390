//! Synthetic logs for the tests.

use std::path::Path;

use crate::{FrameInput, Header, LogWriter, WorldSettingsRecord};

/// Owned data of one synthetic frame.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnedFrame {
    pub substep: u64,
    pub time: f64,
    pub poses: Vec<[f32; 7]>,
    pub velocities: Vec<[f32; 6]>,
    pub diagnostics: Vec<[f32; 8]>,
    pub solver_state: Option<Vec<f32>>,
    pub total_energy: f64,
    pub state_hash: u64,
}

impl OwnedFrame {
    pub fn input(&self) -> FrameInput<'_> {
        FrameInput {
            substep: self.substep,
            time: self.time,
            poses: &self.poses,
            velocities: &self.velocities,
            diagnostics: &self.diagnostics,
            solver_state: self.solver_state.as_deref(),
            total_energy: self.total_energy,
            state_hash: self.state_hash,
        }
    }

    /// Recomputes the state hash from the values (a stand-in for the engine's hash).
    pub fn rehash(&mut self) {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut mix = |bits: u32| {
            h ^= bits as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        };
        for v in self.poses.iter().flatten() {
            mix(v.to_bits());
        }
        for v in self.velocities.iter().flatten() {
            mix(v.to_bits());
        }
        self.state_hash = h;
    }
}

pub fn header(bodies: usize, joints: usize) -> Header {
    Header {
        body_count: bodies,
        body_names: (0..bodies).map(|b| format!("link{b}")).collect(),
        joint_count: joints,
        joint_names: (0..joints).map(|j| format!("hinge{j}")).collect(),
        world: WorldSettingsRecord {
            dt: 1.0 / 60.0,
            max_substep: 1.0 / 240.0,
            velocity_iterations: 8,
            position_iterations: 2,
            gravity: [0.0, -9.81, 0.0],
        },
        scene_hash: 0x5eed,
        engine_version: "0.1.0-test".into(),
        target_features: "+sse2".into(),
        scene: "[world]\ndt = 0.0166\n".into(),
        spike_index: None,
    }
}

/// A smooth synthetic run: bodies drift, residuals are small and slowly varying.
pub fn frames(bodies: usize, joints: usize, n: usize, keyframe_every: usize) -> Vec<OwnedFrame> {
    let dt = 1.0 / 240.0;
    (0..n)
        .map(|s| {
            let t = (s + 1) as f64 * dt;
            let tf = t as f32;
            let mut f = OwnedFrame {
                substep: s as u64,
                time: t,
                poses: (0..bodies)
                    .map(|b| {
                        let b = b as f32;
                        [
                            b,
                            1.0 - 0.5 * tf * tf,
                            0.1 * b * tf,
                            0.0,
                            (0.1 * tf).sin(),
                            0.0,
                            (0.1 * tf).cos(),
                        ]
                    })
                    .collect(),
                velocities: (0..bodies)
                    .map(|b| [0.0, -tf, 0.1 * b as f32, 0.0, 0.1, 0.0])
                    .collect(),
                diagnostics: (0..joints)
                    .map(|j| {
                        let base = 1e-4 * (1.0 + 0.1 * (j as f32 + 0.3 * tf).sin());
                        [
                            base,
                            0.0,
                            0.0,
                            base,
                            0.5 * base,
                            0.0,
                            1e-3,
                            j as f32 * 0.01 + tf,
                        ]
                    })
                    .collect(),
                solver_state: (keyframe_every > 0 && s % keyframe_every == 0)
                    .then(|| (0..joints * 3).map(|k| k as f32 * 0.5 + tf).collect()),
                total_energy: 10.0 - 0.001 * t,
                state_hash: 0,
            };
            f.rehash();
            f
        })
        .collect()
}

pub fn write(path: &Path, header: &Header, frames: &[OwnedFrame], finish: bool) {
    let mut w = LogWriter::create(path, header).unwrap();
    for f in frames {
        w.append(&f.input()).unwrap();
    }
    if finish {
        w.finish().unwrap();
    }
}

/// Writes a log to a temporary file and returns its bytes.
pub fn log_bytes(header: &Header, frames: &[OwnedFrame], finish: bool) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.lvlog");
    write(&path, header, frames, finish);
    std::fs::read(path).unwrap()
}

/// A xorshift64 generator: reproducible random inputs for the randomised tests.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `[-1, 1)`, 24 bits.
    pub fn next_signed(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
}
