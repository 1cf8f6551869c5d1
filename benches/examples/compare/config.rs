//! The command line of `compare`.

use std::path::PathBuf;
use std::time::Duration;

use benchmarks::{parse_threads, Size, Tables, DEFAULT_THREADS};

pub const USAGE: &str = "\
usage: compare [OPTIONS]

  --quick              a smoke run: 64 MiB big table, windows cut to 30 %
  --big-mib N          the big table, in MiB (default 512; 64 with --quick)
  --small-items N      the small table's capacity (default 65536)
  --sizes LIST         the sections to run, of small, big, layouts and bulk
                       (default small,big,layouts,bulk); layouts runs every
                       fingerprint width on one thread beside 16-bit; bulk
                       runs the C++ reference's bulk-insert-and-query
                       workload (1 M items at 16 and 8 bits, 30 M at 16)
  --layouts-mib N      the large table of the layouts section, in MiB
                       (default 64; 16 with --quick)
  --threads LIST       thread counts of the concurrent runs (default 1,2,4,8)
  --st-ms MS           window of one single-thread figure (default 300)
  --conc-ms MS         one concurrent run (default 400)
  --out DIR            where compare.md and compare.svg go (default docs)
  -h, --help           this text";

pub struct Config {
    pub tables: Tables,
    pub sizes: Vec<Size>,
    /// Whether to run the layouts section.
    pub layouts: bool,
    /// Whether to run the bulk section (the C++ reference's workload).
    pub bulk: bool,
    /// `--quick`.
    pub quick: bool,
    pub layouts_mib: f64,
    pub out: PathBuf,
    pub st_time: Duration,
    pub conc_time: Duration,
    pub threads: Vec<usize>,
    pub fill_threads: usize,
}

/// What the command line asked for: `Help`, or a run.
pub enum Command {
    Help,
    Run(Config),
}

impl Config {
    pub fn parse() -> Result<Command, lexopt::Error> {
        use lexopt::prelude::*;

        let mut quick = false;
        let mut big_mib = None;
        let mut small_items = Tables::DEFAULT.small_items;
        let mut sizes = vec![Size::Small, Size::Big];
        let mut layouts = true;
        let mut bulk = true;
        let mut layouts_mib = None;
        let mut threads = DEFAULT_THREADS.to_vec();
        let mut st_ms = None;
        let mut conc_ms = None;
        let mut out = PathBuf::from("docs");
        let mut parser = lexopt::Parser::from_env();
        while let Some(arg) = parser.next()? {
            match arg {
                Long("quick") => quick = true,
                Long("big-mib") => big_mib = Some(parser.value()?.parse()?),
                Long("small-items") => small_items = parser.value()?.parse()?,
                Long("sizes") => {
                    (sizes, layouts, bulk) = parser.value()?.parse_with(parse_sections)?
                }
                Long("layouts-mib") => layouts_mib = Some(parser.value()?.parse()?),
                Long("threads") => threads = parser.value()?.parse_with(parse_threads)?,
                Long("st-ms") => st_ms = Some(parser.value()?.parse()?),
                Long("conc-ms") => conc_ms = Some(parser.value()?.parse()?),
                Long("out") => out = parser.value()?.into(),
                // Passed by `cargo bench` to targets without a harness.
                Long("bench") => {}
                Short('h') | Long("help") => return Ok(Command::Help),
                _ => return Err(arg.unexpected()),
            }
        }
        let scale = if quick { 0.3 } else { 1.0 };
        let ms = |v: Option<f64>, default: f64| Duration::from_secs_f64(v.unwrap_or(default) / 1e3);
        Ok(Command::Run(Self {
            tables: Tables {
                small_items,
                big_mib: big_mib.unwrap_or(if quick { 64.0 } else { 512.0 }),
            },
            sizes,
            layouts,
            bulk,
            quick,
            layouts_mib: layouts_mib.unwrap_or(if quick { 16.0 } else { 64.0 }),
            out,
            st_time: ms(st_ms, 300.0 * scale),
            conc_time: ms(conc_ms, 400.0 * scale),
            threads,
            fill_threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
        }))
    }
}

/// `--sizes`: table sizes, then whether the layouts and bulk sections run.
fn parse_sections(spec: &str) -> Result<(Vec<Size>, bool, bool), String> {
    let names: Vec<&str> = spec.split(',').map(str::trim).collect();
    if let Some(name) = names
        .iter()
        .find(|n| !["small", "big", "layouts", "bulk"].contains(n))
    {
        return Err(format!(
            "not a section: {name:?} (small, big, layouts or bulk)"
        ));
    }
    let layouts = names.contains(&"layouts");
    let bulk = names.contains(&"bulk");
    let sizes: Vec<&str> = names
        .into_iter()
        .filter(|&name| name != "layouts" && name != "bulk")
        .collect();
    let sizes = if sizes.is_empty() {
        Vec::new()
    } else {
        Size::parse_list(&sizes.join(","))?
    };
    Ok((sizes, layouts, bulk))
}
