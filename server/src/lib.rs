//! `cuckoo-server`: a Redis-compatible server of lock-free cuckoo filters.
//!
//! It speaks RESP2 and RESP3 and RedisBloom's `CF.*` commands, so that every
//! Redis client, `redis-cli` and `redis-benchmark` work with it; it serves
//! connections on every core with no lock around any filter operation, and
//! saves through live snapshots. See the README for how to run it.
//!
//! The modules, in the order a request meets them:
//!
//! * [`server`]: listens, accepts, runs the save schedule, stops.
//! * [`connection`]: reads requests, runs them, writes the replies.
//! * [`clients`]: the connected clients, for `CLIENT LIST` and `INFO`.
//! * [`frame`]: RESP: parses requests, writes replies.
//! * [`cmd`]: the commands, one module per family.
//! * [`db`]: the names and their filters.
//! * [`persist`]: the save file, its lock, saves and the load at start;
//!   `direct` writes it around the page cache.
//! * [`config`]: the options, as redis-server takes them.

#![warn(missing_docs)]

pub mod clients;
pub mod cmd;
pub mod config;
pub mod connection;
pub mod db;
mod direct;
pub mod frame;
pub mod persist;
pub mod server;
