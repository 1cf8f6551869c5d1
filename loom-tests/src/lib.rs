//! loom models of the filter's concurrency protocol live in `tests/`; this
//! library is empty. The models compile only under `--cfg
//! lockfree_cuckoo_filter_loom`, so `cargo test` does not build them (they are
//! `test = false`): run them with `bash loom-tests/run.sh`.

#[cfg(test)]
mod tests {
    /// Says, in the output of a plain `cargo test`, where the models went.
    #[test]
    fn the_loom_models_run_with_loom_tests_run_sh() {}
}
