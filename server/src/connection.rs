//! One client connection: read requests, run them, write the replies.
//!
//! Requests are parsed out of the read buffer as they arrive, and every
//! request the buffer holds whole is run before anything is written: the
//! replies of a pipeline of N requests that arrive together go out in one
//! `write`, in request order. A client that sends one request at a time
//! gets each reply at once.
//!
//! A request that arrives in many reads is parsed as it comes: the parser
//! keeps its place between reads.

use std::io;
use std::sync::Arc;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::clients::Client;
use crate::cmd::{self, Action, Session, Shared};
use crate::frame::{Args, Parsed, Parser, Reply};

/// Replies are written out once this many bytes are waiting, even in the
/// middle of a pipeline, so that a long pipeline does not pile up memory.
const FLUSH_AT: usize = 1 << 20;

/// The kind of error a connection ends with when the server stops under it.
pub const STOPPING: io::ErrorKind = io::ErrorKind::ConnectionAborted;

/// A client connection.
pub struct Connection {
    stream: TcpStream,
    input: BytesMut,
    output: Vec<u8>,
    /// Parses the requests in `input`, and keeps its place in one that has
    /// not all arrived; where each argument of the request being run lies.
    parser: Parser,
    session: Session,
    /// Commands run.
    commands: u64,
}

/// How a connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum End {
    /// The client closed it, sent `QUIT`, broke the protocol, or the socket failed.
    Closed,
    /// A client asked the server to stop (`SHUTDOWN`), and the save it asked
    /// for, if any, is done.
    Shutdown,
}

impl Connection {
    /// A connection on `stream`, published in `CLIENT LIST` as `client`
    /// (whose id it takes).
    pub fn new(stream: TcpStream, client: Arc<Client>, authenticated: bool) -> Connection {
        let mut session = Session::new(client.id, authenticated);
        session.client = Some(client);
        Connection {
            stream,
            input: BytesMut::with_capacity(16 * 1024),
            output: Vec::with_capacity(16 * 1024),
            parser: Parser::new(),
            session,
            commands: 0,
        }
    }

    /// Serves the connection until it ends.
    pub async fn run(mut self, shared: Arc<Shared>) -> io::Result<End> {
        // Parse nothing again until the buffer holds this many bytes.
        let mut need = 1;
        loop {
            if self.input.len() >= need {
                let mut at = 0;
                loop {
                    let parsed = self
                        .parser
                        .parse(&mut self.input[at..], &shared.config.limits);
                    match parsed {
                        Parsed::Request(len) => {
                            let spans = self.parser.spans();
                            let action = if spans.is_empty() {
                                Action::Continue
                            } else {
                                let args = Args::new(&self.input[at..], spans);
                                let action = cmd::execute(
                                    &shared,
                                    &mut self.session,
                                    args,
                                    &mut self.output,
                                );
                                self.commands += 1;
                                if let Some(client) = &self.session.client {
                                    client.counted(self.commands);
                                }
                                action
                            };
                            at += len;
                            match action {
                                Action::Continue => {}
                                Action::Close => {
                                    self.flush(&shared).await?;
                                    return Ok(End::Closed);
                                }
                                Action::Save => self.save(&shared).await,
                                Action::Shutdown { save } => {
                                    if self.shutdown(&shared, save).await {
                                        return Ok(End::Shutdown);
                                    }
                                }
                            }
                            if self.output.len() >= FLUSH_AT {
                                self.flush(&shared).await?;
                            }
                        }
                        Parsed::Incomplete { need: more } => {
                            need = more;
                            break;
                        }
                        Parsed::Error(message) => {
                            Reply::new(&mut self.output, self.session.resp3)
                                .error(&format!("ERR {message}"));
                            self.flush(&shared).await?;
                            return Ok(End::Closed);
                        }
                    }
                }
                // `need`, and the place the parser keeps in a request not
                // all here, count from the first unparsed byte, which is now
                // the buffer's first.
                self.input.advance(at);
                self.flush(&shared).await?;
            }
            // Room for the next read: the buffer grows with what arrives, never
            // to a size a header announced before its bytes came.
            if self.input.capacity() == self.input.len() {
                let missing = need.saturating_sub(self.input.len());
                self.input.reserve(missing.clamp(16 * 1024, 1 << 20));
            }
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Ok(End::Closed);
            }
            if let Some(client) = &self.session.client {
                client.touch();
            }
        }
    }

    /// Sends the replies gathered so far; none once the server is stopping
    /// (a reply may acknowledge a write its final save does not hold), when
    /// the connection ends with [`STOPPING`]'s kind of error.
    async fn flush(&mut self, shared: &Shared) -> io::Result<()> {
        if !self.output.is_empty() {
            if !shared.may_reply() {
                return Err(io::Error::new(STOPPING, "the server is stopping"));
            }
            self.stream.write_all(&self.output).await?;
            self.output.clear();
        }
        Ok(())
    }

    /// `SAVE`: on a blocking thread, after any save under way; only this
    /// connection waits for it.
    async fn save(&mut self, shared: &Arc<Shared>) {
        let store = Arc::clone(&shared.store);
        let done = tokio::task::spawn_blocking(move || store.save()).await;
        let mut reply = Reply::new(&mut self.output, self.session.resp3);
        match done {
            Ok(Ok(_)) => reply.ok(),
            Ok(Err(e)) => reply.error(&format!("ERR saving failed: {e}")),
            Err(_) => reply.error("ERR saving failed"),
        }
    }

    /// `SHUTDOWN`: saves if asked, then tells the server to stop; whether
    /// it did (a failed save leaves the server running, as Redis does).
    async fn shutdown(&mut self, shared: &Arc<Shared>, save: bool) -> bool {
        shared.begin_stop();
        if save {
            let store = Arc::clone(&shared.store);
            let saved = tokio::task::spawn_blocking(move || store.save()).await;
            if !matches!(saved, Ok(Ok(_))) {
                shared.cancel_stop();
                Reply::new(&mut self.output, self.session.resp3)
                    .error("ERR Errors trying to SHUTDOWN. Check logs.");
                return false;
            }
        }
        shared.shutdown.notify_one();
        true
    }
}
