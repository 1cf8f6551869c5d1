//! The `cuckoo-server` binary: parses the options and runs the server.

use std::process::ExitCode;

use cuckoo_server::config::Config;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = match Config::from_args(&args) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("cuckoo-server: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(config.threads)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cuckoo-server: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(cuckoo_server::server::run(config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cuckoo-server: {e}");
            ExitCode::from(1)
        }
    }
}
