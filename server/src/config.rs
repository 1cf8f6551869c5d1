//! The server's options, named and written as `redis-server` takes them:
//! `--port 6380 --save "60 1"`, or lines of a config file (`port 6380`).

use std::path::PathBuf;
use std::time::Duration;

use crate::frame::Limits;

/// The options.
#[derive(Clone, Debug)]
pub struct Config {
    /// TCP port (0: any free port, printed at start).
    pub port: u16,
    /// Addresses to listen on.
    pub bind: Vec<String>,
    /// The password clients must give (`AUTH`), if any.
    pub requirepass: Option<String>,
    /// The directory of the save file.
    pub dir: PathBuf,
    /// The save file's name.
    pub dbfilename: String,
    /// Save this often when something changed (`None`: only on `SAVE`,
    /// `BGSAVE`, `SHUTDOWN SAVE`).
    pub save: Option<Duration>,
    /// Bytes the filters may take in all (0: no limit).
    pub maxmemory: usize,
    /// Connections at once.
    pub maxclients: usize,
    /// Request limits.
    pub limits: Limits,
    /// The false-positive rate of filters created without `ERROR_RATE`.
    pub error_rate: f64,
    /// Worker threads (default: one per core).
    pub threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            port: 6379,
            bind: vec!["127.0.0.1".into()],
            requirepass: None,
            dir: PathBuf::from("."),
            dbfilename: "dump.cuckoo".into(),
            save: Some(Duration::from_secs(60)),
            maxmemory: default_maxmemory(),
            maxclients: 10_000,
            limits: Limits::default(),
            error_rate: 0.01,
            threads: std::thread::available_parallelism().map_or(1, usize::from),
        }
    }
}

/// Half of the machine's memory, where it can be read; else 4 GiB.
fn default_maxmemory() -> usize {
    let total_kib = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
    });
    total_kib.map_or(4 << 30, |kib| kib * 1024 / 2)
}

/// The usage line.
pub const USAGE: &str = "\
usage: cuckoo-server [config-file] [--option value ...]

Options, as redis-server names them (defaults in brackets):
  --port N                  TCP port [6379]; 0 picks a free one
  --bind ADDR...            addresses to listen on [127.0.0.1]
  --requirepass PASSWORD    clients must AUTH with it [none]
  --dir DIR                 directory of the save file [.]
  --dbfilename NAME         the save file [dump.cuckoo]
  --save \"SECS [CHANGES ...]\" save every SECS seconds when anything
                            changed; \"\" saves only when asked [60]
  --maxmemory BYTES         memory all filters may take (units: kb mb gb)
                            [half the machine's]; 0: no limit
  --maxclients N            connections at once [10000]
  --proto-max-bulk-len BYTES  the longest argument [512mb]
  --max-multibulk-len N     the most arguments in a request [1048576]
  --client-query-buffer-limit BYTES  the longest request [1gb]
  --cf-error-rate RATE      false-positive rate of filters created without
                            ERROR_RATE [0.01]
  --threads N               worker threads [one per core]
";

/// A size as Redis writes one: `100`, `64kb`, `1mb`, `2gb` (also `k`, `m`, `g`
/// for powers of ten).
pub fn parse_bytes(s: &str) -> Option<usize> {
    let lower = s.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let n: usize = digits.parse().ok()?;
    let scale: usize = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1 << 10,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// Options that redis-server takes and that mean nothing here, with the
/// values that are harmless.
const IGNORED: &[&str] = &[
    "appendonly",
    "daemonize",
    "protected-mode",
    "loglevel",
    "logfile",
    "databases",
    "io-threads",
    "tcp-keepalive",
    "timeout",
    "always-show-logo",
    "enable-debug-command",
];

impl Config {
    /// Parses the command line (without the program name).
    pub fn from_args(args: &[String]) -> Result<Config, String> {
        let mut options: Vec<(String, Vec<String>)> = Vec::new();
        let mut rest = args;
        if let Some(first) = rest.first() {
            if !first.starts_with("--") {
                let text = std::fs::read_to_string(first)
                    .map_err(|e| format!("cannot read the config file {first}: {e}"))?;
                for line in text.lines().map(str::trim) {
                    if line.is_empty() || line.starts_with('#') {
                        continue;
                    }
                    let mut words = line
                        .split_whitespace()
                        .map(|w| w.trim_matches('"').to_string());
                    let name = words.next().unwrap_or_default();
                    options.push((name, words.collect()));
                }
                rest = &rest[1..];
            }
        }
        let mut i = 0;
        while i < rest.len() {
            let Some(name) = rest[i].strip_prefix("--") else {
                return Err(format!("unexpected argument {:?}\n\n{USAGE}", rest[i]));
            };
            let mut values = Vec::new();
            i += 1;
            while i < rest.len() && !rest[i].starts_with("--") {
                values.push(rest[i].clone());
                i += 1;
            }
            options.push((name.to_string(), values));
        }
        let mut config = Config::default();
        for (name, values) in options {
            config.set(&name.to_ascii_lowercase(), &values)?;
        }
        Ok(config)
    }

    fn set(&mut self, name: &str, values: &[String]) -> Result<(), String> {
        let one = || -> Result<&str, String> {
            match values {
                [v] => Ok(v.as_str()),
                _ => Err(format!("--{name} takes one value")),
            }
        };
        let bad = |v: &str| format!("--{name} {v:?}: not a valid value");
        let positive = || -> Result<usize, String> {
            let v = one()?;
            v.parse().ok().filter(|&n| n > 0).ok_or_else(|| bad(v))
        };
        let bytes = || -> Result<usize, String> {
            let v = one()?;
            parse_bytes(v).ok_or_else(|| bad(v))
        };
        match name {
            "help" | "h" => return Err(USAGE.to_string()),
            "port" => {
                let v = one()?;
                self.port = v.parse().map_err(|_| bad(v))?;
            }
            "bind" if !values.is_empty() => {
                self.bind = values
                    .iter()
                    .flat_map(|v| v.split_whitespace())
                    .map(|a| a.trim_start_matches('-').to_string())
                    .collect()
            }
            "requirepass" => {
                let v = one()?;
                self.requirepass = (!v.is_empty()).then(|| v.to_string());
            }
            "dir" => self.dir = PathBuf::from(one()?),
            "dbfilename" => {
                let v = one()?;
                // A name in `--dir`: the lock and the temporary file are
                // made beside it, under names built from it.
                if v.is_empty() || v == "." || v == ".." || v.contains(['/', '\0']) {
                    return Err(format!(
                        "--dbfilename {v:?}: not a file name in --dir (it must not be empty, \
                         \".\", \"..\", or hold a '/')"
                    ));
                }
                self.dbfilename = v.to_string();
            }
            "save" => {
                let words: Vec<&str> = values.iter().flat_map(|v| v.split_whitespace()).collect();
                self.save = if words.is_empty() {
                    None
                } else {
                    // `SECS` or Redis's `SECS CHANGES` pairs: the shortest period.
                    let secs = words
                        .iter()
                        .step_by(2)
                        .map(|w| w.parse::<f64>().ok().filter(|s| *s > 0.0 && s.is_finite()))
                        .collect::<Option<Vec<f64>>>()
                        .ok_or_else(|| bad(&words.join(" ")))?;
                    let shortest = secs.into_iter().fold(f64::INFINITY, f64::min);
                    Some(Duration::from_secs_f64(shortest))
                };
            }
            "maxmemory" => self.maxmemory = bytes()?,
            "maxclients" => self.maxclients = positive()?,
            "proto-max-bulk-len" => self.limits.max_bulk = bytes()?,
            "client-query-buffer-limit" => self.limits.max_request = bytes()?,
            "max-multibulk-len" => self.limits.max_args = positive()?,
            "cf-error-rate" => {
                let v = one()?;
                self.error_rate = v
                    .parse()
                    .ok()
                    .filter(|r: &f64| *r > 0.0 && *r < 1.0)
                    .ok_or_else(|| bad(v))?;
            }
            "threads" => self.threads = positive()?,
            "daemonize" if values.iter().any(|v| v.eq_ignore_ascii_case("yes")) => {
                return Err("--daemonize yes is not supported: run it under a supervisor".into())
            }
            "appendonly" if values.iter().any(|v| v.eq_ignore_ascii_case("yes")) => {
                return Err("--appendonly yes is not supported: saves are snapshots".into())
            }
            _ if IGNORED.contains(&name) => {}
            _ => return Err(format!("unknown option --{name}\n\n{USAGE}")),
        }
        Ok(())
    }

    /// The save file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(&self.dbfilename)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::from_args(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn redis_server_flags() {
        let c = parse(&[
            "--port",
            "7000",
            "--save",
            "900 1 300 10",
            "--requirepass",
            "x",
        ])
        .unwrap();
        assert_eq!(
            (c.port, c.save, c.requirepass.as_deref()),
            (7000, Some(Duration::from_secs(300)), Some("x"))
        );
        let c = parse(&[
            "--save",
            "",
            "--maxmemory",
            "2gb",
            "--bind",
            "0.0.0.0",
            "::1",
        ])
        .unwrap();
        assert_eq!((c.save, c.maxmemory, c.bind.len()), (None, 2 << 30, 2));
        assert_eq!(
            parse(&["--save", "0.5"]).unwrap().save,
            Some(Duration::from_millis(500))
        );
        assert!(parse(&["--port", "x"]).is_err());
        assert!(parse(&["--nope", "1"]).is_err());
        for name in ["a/b", ".", "..", "", "../x", "a\0b"] {
            assert!(parse(&["--dbfilename", name]).is_err(), "{name:?}");
        }
        assert!(parse(&["--dbfilename", "..x"]).is_ok());
        assert!(parse(&["--daemonize", "yes"]).is_err());
        assert!(parse(&["--appendonly", "no"]).is_ok());
        assert_eq!(parse_bytes("64kb"), Some(65536));
        assert_eq!(parse_bytes("1x"), None);
    }
}
