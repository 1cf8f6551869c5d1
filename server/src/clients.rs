//! The connected clients, as `CLIENT LIST` and `INFO` show them.
//!
//! Each connection publishes a [`Client`] record under its id in a
//! lock-free map when it starts, and takes it out when it ends. What a
//! client can change about itself (its name, library, protocol) is rare:
//! the connection then publishes a new record in place of the old, so a
//! record never changes but for the time of the latest request, an atomic
//! the connection stores once per batch of requests it reads, and its count
//! of commands, stored after each. `CLIENT LIST` and `INFO` read the map
//! without stopping any connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// What `CLIENT LIST` shows of one connection.
pub struct Client {
    /// The connection's id (`CLIENT ID`).
    pub id: u64,
    /// The client's address and port.
    pub addr: String,
    /// The server's address and port the client reached.
    pub laddr: String,
    /// When the connection was accepted.
    pub since: Instant,
    /// Milliseconds from `since` to the start of the latest batch of
    /// requests. Relaxed: a moment's figure, as Redis's `idle` is.
    active: AtomicU64,
    /// Commands it has run (stored by the connection after each one, to its
    /// own record: no line shared between connections is written).
    commands: AtomicU64,
    /// `CLIENT SETNAME`'s name.
    pub name: Option<Vec<u8>>,
    /// `CLIENT SETINFO LIB-NAME`.
    pub lib_name: Option<Vec<u8>>,
    /// `CLIENT SETINFO LIB-VER`.
    pub lib_ver: Option<Vec<u8>>,
    /// Whether it speaks RESP3.
    pub resp3: bool,
}

impl Client {
    /// A new connection's record: no name, RESP2, active now.
    pub fn new(id: u64, addr: String, laddr: String) -> Client {
        Client {
            id,
            addr,
            laddr,
            since: Instant::now(),
            active: AtomicU64::new(0),
            commands: AtomicU64::new(0),
            name: None,
            lib_name: None,
            lib_ver: None,
            resp3: false,
        }
    }

    /// This record with another name, library or protocol, and the same
    /// connection and latest request.
    pub fn with(
        &self,
        name: Option<Vec<u8>>,
        lib_name: Option<Vec<u8>>,
        lib_ver: Option<Vec<u8>>,
        resp3: bool,
    ) -> Client {
        Client {
            id: self.id,
            addr: self.addr.clone(),
            laddr: self.laddr.clone(),
            since: self.since,
            active: AtomicU64::new(self.active.load(Ordering::Relaxed)),
            commands: AtomicU64::new(self.commands.load(Ordering::Relaxed)),
            name,
            lib_name,
            lib_ver,
            resp3,
        }
    }

    /// Notes that a batch of requests starts now.
    #[inline]
    pub fn touch(&self) {
        let ms = self.since.elapsed().as_millis() as u64;
        self.active.store(ms, Ordering::Relaxed);
    }

    /// Notes that it has run `commands` commands in all.
    #[inline]
    pub fn counted(&self, commands: u64) {
        self.commands.store(commands, Ordering::Relaxed);
    }

    /// Its line of `CLIENT LIST` and `CLIENT INFO` (Redis's fields that
    /// apply here, in Redis's order), with the newline.
    pub fn line(&self) -> String {
        let text = |b: &Option<Vec<u8>>| {
            b.as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default()
                .into_owned()
        };
        let age = self.since.elapsed();
        let idle = age
            .as_millis()
            .saturating_sub(u128::from(self.active.load(Ordering::Relaxed)))
            / 1000;
        format!(
            "id={} addr={} laddr={} name={} age={} idle={} flags=N db=0 sub=0 psub=0 \
             ssub=0 multi=-1 user=default resp={} lib-name={} lib-ver={}\n",
            self.id,
            self.addr,
            self.laddr,
            text(&self.name),
            age.as_secs(),
            idle,
            if self.resp3 { 3 } else { 2 },
            text(&self.lib_name),
            text(&self.lib_ver),
        )
    }
}

/// The connected clients, by id.
#[derive(Default)]
pub struct Clients {
    map: papaya::HashMap<u64, Arc<Client>>,
    /// Commands run by the connections that have ended.
    ended: AtomicU64,
}

impl Clients {
    /// Publishes `client` under its id, in place of any record there.
    pub fn publish(&self, client: Arc<Client>) {
        self.map.pin().insert(client.id, client);
    }

    /// Takes the record of connection `id` out, keeping its commands'
    /// count.
    pub fn remove(&self, id: u64) {
        if let Some(client) = self.map.pin().remove(&id) {
            let commands = client.commands.load(Ordering::Relaxed);
            self.ended.fetch_add(commands, Ordering::Relaxed);
        }
    }

    /// Commands run since the server started (`INFO`'s
    /// `total_commands_processed`): a moment's figure, which may count a
    /// connection that is just ending twice for that moment.
    pub fn commands(&self) -> u64 {
        let live: u64 = self
            .map
            .pin()
            .values()
            .map(|c| c.commands.load(Ordering::Relaxed))
            .sum();
        self.ended.load(Ordering::Relaxed) + live
    }

    /// Every record, by id.
    pub fn list(&self) -> Vec<Arc<Client>> {
        let mut all: Vec<Arc<Client>> = self.map.pin().values().cloned().collect();
        all.sort_unstable_by_key(|c| c.id);
        all
    }
}
