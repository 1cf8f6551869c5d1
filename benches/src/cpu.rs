//! The process's CPU time, to read beside wall time on a machine that others
//! use too: a run that had fewer cores than threads shows it as wall time
//! beyond its CPU time per thread.

/// CPU seconds this process has used so far, user and system, all threads
/// (those joined included); 0 where `getrusage` is not available.
pub fn cpu_seconds() -> f64 {
    #[cfg(target_os = "linux")]
    {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `getrusage` writes a `rusage` through the valid pointer it
        // is given, and RUSAGE_SELF is a valid `who`.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
        if rc != 0 {
            return 0.0;
        }
        // SAFETY: zero-initialised, and filled in by the successful call.
        let usage = unsafe { usage.assume_init() };
        let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        secs(usage.ru_utime) + secs(usage.ru_stime)
    }
    #[cfg(not(target_os = "linux"))]
    0.0
}
