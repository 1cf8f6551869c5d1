//! loom models of the filter's concurrency protocol live in `tests/`; this
//! library is empty. The models compile only under `--cfg
//! lockfree_cuckoo_filter_loom`, so `cargo test` does not build them (they are
//! `test = false`): run them with `bash loom-tests/run.sh`.

#[cfg(test)]
mod tests {
    /// Every model file in `tests/` has a `test = false` entry in Cargo.toml,
    /// so that a plain `cargo test` builds none of them; `run.sh` runs them
    /// all. (Its name also says, in `cargo test`'s output, where they went.)
    #[test]
    fn the_loom_models_run_with_loom_tests_run_sh() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let mut models: Vec<String> = std::fs::read_dir(dir.join("tests"))
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".rs").map(str::to_owned)
            })
            .collect();
        models.sort();
        assert!(models.len() >= 9, "{models:?}");
        for model in models {
            let entry = format!("[[test]]\nname = \"{model}\"\ntest = false\n");
            assert!(
                manifest.contains(&entry),
                "no `test = false` entry for tests/{model}.rs"
            );
        }
    }
}
