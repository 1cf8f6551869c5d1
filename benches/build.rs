//! Links the Vector Quotient Filter into the `vqf` example when `VQF_LIB_DIR`
//! names a folder holding `libvqf.a` (made by `vqf/build.sh` from a VQF
//! checkout outside this repository), and sets `cfg(vqf)`. Without the
//! variable nothing is linked, and the example runs this crate's rows alone.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(vqf)");
    println!("cargo::rerun-if-env-changed=VQF_LIB_DIR");
    println!("cargo::rerun-if-changed=build.rs");
    let Some(dir) = std::env::var_os("VQF_LIB_DIR").filter(|d| !d.is_empty()) else {
        return;
    };
    let dir = PathBuf::from(dir);
    let lib = dir.join("libvqf.a");
    // VQF is x86-64 code (BMI2, AVX-512 or AVX2), and the example's glue
    // uses Linux's libc.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os != "linux" || arch != "x86_64" {
        println!("cargo::warning=VQF_LIB_DIR is set, but VQF is only linked on x86-64 Linux");
        return;
    }
    assert!(
        lib.is_file(),
        "VQF_LIB_DIR={}: no libvqf.a there (benches/vqf/build.sh makes it)",
        dir.display()
    );
    println!("cargo::rerun-if-changed={}", lib.display());
    println!("cargo::rustc-link-search=native={}", dir.display());
    println!("cargo::rustc-link-lib=static=vqf");
    println!("cargo::rustc-cfg=vqf");
}
