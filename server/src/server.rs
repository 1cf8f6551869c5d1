//! The listening side: accept connections, run the save schedule, stop.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

use crate::clients::Client;
use crate::cmd::Shared;
use crate::config::Config;
use crate::connection::{Connection, End, STOPPING};
use crate::db::Db;
use crate::persist::Store;

/// Opens the save file (loading it), binds the addresses, and serves until
/// `SHUTDOWN`, SIGTERM or SIGINT. A start that cannot load the file or bind
/// returns the error before serving anything.
pub async fn run(config: Config) -> Result<(), String> {
    let db = Arc::new(Db::new(config.maxmemory));
    let path = config.path();
    let started = Instant::now();
    let (store, loaded) = Store::open(path.clone(), Arc::clone(&db)).map_err(|e| e.to_string())?;
    if loaded > 0 || path.exists() {
        println!(
            "loaded {loaded} filters from {} in {:.1} ms",
            path.display(),
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    let mut listeners = Vec::new();
    for addr in &config.bind {
        let listener = TcpListener::bind((addr.as_str(), config.port))
            .await
            .map_err(|e| format!("cannot listen on {addr} port {}: {e}", config.port))?;
        listeners.push(listener);
    }
    let shared = Arc::new(Shared::new(db, Arc::new(store), config, started));
    for listener in listeners {
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        println!("ready to accept connections on {addr}");
        tokio::spawn(accept(listener, Arc::clone(&shared)));
    }
    if let Some(every) = shared.config.save {
        println!(
            "saving to {} every {:.1} s when anything changed",
            path.display(),
            every.as_secs_f64()
        );
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                if shared.db.is_dirty() {
                    shared.store.background_save();
                }
            }
        });
    }
    wait_for_stop(&shared).await
}

/// Waits for `SHUTDOWN` (its save is done, and its stop committed), or for
/// SIGTERM or SIGINT (then saves if saves are scheduled, as Redis does);
/// then for a background save under way to end. A signal whose save fails
/// does not stop the server: the error is logged and it goes on serving
/// (as Redis does), and the next signal tries again. While a stop is
/// undecided connections hold their replies, and once one is committed they
/// send none, so that every write acknowledged is in the last save
/// ([`Shared::begin_stop`]).
async fn wait_for_stop(shared: &Arc<Shared>) -> Result<(), String> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| e.to_string())?;
    loop {
        let signal = tokio::select! {
            _ = shared.shutdown.notified() => break,
            _ = term.recv() => "SIGTERM",
            _ = tokio::signal::ctrl_c() => "SIGINT",
        };
        let stop = shared.begin_stop();
        if shared.config.save.is_some() {
            match shared.store.save_off_worker().await {
                Ok(report) => println!("{report} before stopping"),
                Err(e) => {
                    eprintln!(
                        "cuckoo-server: {signal}: Error trying to save the DB to {}, \
                         can't exit; serving on: {e}",
                        shared.store.path().display()
                    );
                    drop(stop);
                    continue;
                }
            }
        }
        stop.commit();
        break;
    }
    let store = Arc::clone(&shared.store);
    let _ = tokio::task::spawn_blocking(move || store.finish_background_save()).await;
    println!("stopped");
    Ok(())
}

async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, or a connection reset before it
                // was taken: wait a moment rather than spin.
                eprintln!("cuckoo-server: accept: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                continue;
            }
        };
        tokio::spawn(serve(stream, Arc::clone(&shared)));
    }
}

async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    let id = shared.connections.fetch_add(1, Ordering::Relaxed) + 1;
    if shared.clients.fetch_add(1, Ordering::SeqCst) >= shared.config.maxclients {
        let _ = stream
            .write_all(b"-ERR max number of clients reached\r\n")
            .await;
        shared.clients.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let _ = stream.set_nodelay(true);
    let addr = |a: io::Result<std::net::SocketAddr>| a.map_or(String::new(), |a| a.to_string());
    let client = Arc::new(Client::new(
        id,
        addr(stream.peer_addr()),
        addr(stream.local_addr()),
    ));
    shared.connected.publish(Arc::clone(&client));
    let authenticated = shared.config.requirepass.is_none();
    let ended: io::Result<End> = Connection::new(stream, client, authenticated)
        .run(Arc::clone(&shared))
        .await;
    shared.connected.remove(id);
    crate::cmd::abandon_loads(&shared, id);
    shared.clients.fetch_sub(1, Ordering::SeqCst);
    if let Err(e) = ended {
        let quiet = [
            io::ErrorKind::ConnectionReset,
            io::ErrorKind::BrokenPipe,
            STOPPING,
        ];
        if !quiet.contains(&e.kind()) {
            eprintln!("cuckoo-server: connection {id}: {e}");
        }
    }
}
