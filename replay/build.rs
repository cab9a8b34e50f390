//! Fails early, with the fix in the message, when the HDF5 C library is missing.
//!
//! `hdf5-metno-sys` (pulled in by the HDF5 export) finds libhdf5 through pkg-config and
//! otherwise stops with "Unable to locate HDF5 root directory and/or headers". This script
//! has no build dependencies, so cargo runs it before that one has even been compiled, and
//! its message says how to install the library.

use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=HDF5_DIR");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_LIBDIR");
    if std::env::var_os("HDF5_DIR").is_some() {
        // The user points hdf5-metno-sys at an installation by hand; trust it.
        return;
    }
    let probe = Command::new("pkg-config")
        .args(["--exists", "hdf5"])
        .status();
    let problem = match probe {
        Ok(status) if status.success() => return,
        Ok(_) => "pkg-config does not know the `hdf5` package (libhdf5-dev is not installed)",
        Err(_) => "`pkg-config` is not installed, so the HDF5 library cannot be located",
    };
    panic!(
        "\n\nlavender-replay needs the HDF5 C library for HDF5 export: {problem}.\n\
         Install it with the project's setup script:\n\n    bash .ci/setup\n\n\
         or directly:\n\n    sudo apt-get install libhdf5-dev pkg-config\n\n\
         (macOS: `brew install hdf5 pkg-config`; elsewhere set HDF5_DIR to an HDF5 1.10+ \
         installation.)\n\n"
    );
}
