//! One client connection: read requests, run them, write the replies.
//!
//! Requests are parsed out of the read buffer as they arrive, and every
//! request the buffer holds whole is run before anything is written: the
//! replies of a pipeline of N requests that arrive together go out in one
//! `write`, in request order. A client that sends one request at a time
//! gets each reply at once.
//!
//! A request that arrives in many reads is parsed as it comes (the parser
//! keeps its place between reads), and a buffer that grew for a large
//! request or reply goes back to its usual size once it is empty, so that an
//! idle connection holds little memory.

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

/// The size of a connection's read and write buffers: what ordinary
/// requests and replies need, so that they allocate nothing.
const BUFFER: usize = 16 * 1024;

/// A buffer grown past this, for a large request or reply, goes back to
/// [`BUFFER`] once it is empty. Ordinary traffic stays well under it: a
/// batch of requests is what one read brings in, and the replies of a batch
/// are flushed once [`FLUSH_AT`] bytes wait.
const SHRINK_ABOVE: usize = FLUSH_AT;

/// The kind of error a connection ends with when the server stops under it.
pub const STOPPING: io::ErrorKind = io::ErrorKind::ConnectionAborted;

/// A client connection.
pub struct Connection {
    stream: TcpStream,
    input: BytesMut,
    /// Whether `input` has grown large since it was last a new buffer of
    /// [`BUFFER`] bytes.
    input_large: bool,
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
            input: BytesMut::with_capacity(BUFFER),
            input_large: false,
            output: Vec::with_capacity(BUFFER),
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
                                Action::Shutdown { save, force } => {
                                    if self.shutdown(&shared, save, force).await {
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
                shrink(&mut self.input, &mut self.input_large, &mut self.output);
                self.parser.shrink();
            }
            self.input_large |= room_to_read(&mut self.input, need);
            if self.stream.read_buf(&mut self.input).await? == 0 {
                return Ok(End::Closed);
            }
            if let Some(client) = &self.session.client {
                client.touch();
            }
        }
    }

    /// Sends the replies gathered so far, leaving the write buffer empty.
    /// While a stop is undecided it holds them (a reply may acknowledge a
    /// write the final save does not hold), and sends them if the stop is
    /// cancelled; once the server is stopping it sends none, and the
    /// connection ends with [`STOPPING`]'s kind of error.
    async fn flush(&mut self, shared: &Shared) -> io::Result<()> {
        if !self.output.is_empty() {
            if !shared.may_reply().await {
                return Err(io::Error::new(STOPPING, "the server is stopping"));
            }
            self.stream.write_all(&self.output).await?;
            self.output.clear();
        }
        Ok(())
    }

    /// `SAVE`: on a blocking thread, after any save under way; only this
    /// connection waits for it. A failure is logged as well as answered.
    async fn save(&mut self, shared: &Arc<Shared>) {
        let saved = shared.store.save_off_worker().await;
        let mut reply = Reply::new(&mut self.output, self.session.resp3);
        match saved {
            Ok(_) => reply.ok(),
            Err(e) => {
                eprintln!(
                    "cuckoo-server: SAVE to {} failed: {e}",
                    shared.store.path().display()
                );
                reply.error(&format!("ERR saving failed: {e}"));
            }
        }
    }

    /// `SHUTDOWN`: saves if asked, then tells the server to stop; whether
    /// it did. A failed save is logged, and leaves the server running (as
    /// Redis does) unless `force`.
    async fn shutdown(&mut self, shared: &Arc<Shared>, save: bool, force: bool) -> bool {
        let stop = shared.begin_stop();
        if save {
            if let Err(e) = shared.store.save_off_worker().await {
                let path = shared.store.path().display();
                if !force {
                    eprintln!(
                        "cuckoo-server: the save to {path} before SHUTDOWN failed, \
                         so the server goes on: {e}"
                    );
                    drop(stop);
                    Reply::new(&mut self.output, self.session.resp3)
                        .error("ERR Errors trying to SHUTDOWN. Check logs.");
                    return false;
                }
                eprintln!(
                    "cuckoo-server: the save to {path} before SHUTDOWN failed, \
                     stopping anyway (FORCE): {e}"
                );
            }
        }
        stop.commit();
        shared.shutdown.notify_one();
        true
    }
}

/// Makes room in `input` for the next read, if it has none: the buffer grows
/// with what arrives, never to a size a header announced before its bytes
/// came (`need` is what the parser asked for). Whether the buffer is now
/// large: its room from the front is over half [`SHRINK_ABOVE`]. A buffer
/// grows at least twofold, so its room after growing is over half its size,
/// and any buffer larger than [`SHRINK_ABOVE`] is reported.
fn room_to_read(input: &mut BytesMut, need: usize) -> bool {
    if input.capacity() > input.len() {
        return false;
    }
    let missing = need.saturating_sub(input.len());
    input.reserve(missing.clamp(BUFFER, 1 << 20));
    input.capacity() > SHRINK_ABOVE / 2
}

/// Gives back buffers that grew for a large request or reply: the read
/// buffer once it is empty (`input_large` says it grew), the write buffer
/// (empty after a flush) when its capacity is over [`SHRINK_ABOVE`]. Both
/// start again at [`BUFFER`]; buffers of ordinary size are kept as they are.
fn shrink(input: &mut BytesMut, input_large: &mut bool, output: &mut Vec<u8>) {
    if *input_large && input.is_empty() {
        *input = BytesMut::with_capacity(BUFFER);
        *input_large = false;
    }
    if output.capacity() > SHRINK_ABOVE && output.is_empty() {
        *output = Vec::with_capacity(BUFFER);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `bytes` into `input` as a connection does: room first, then as
    /// much as fits; whether the buffer became large on the way.
    fn read_in(input: &mut BytesMut, mut bytes: &[u8], need: usize) -> bool {
        let mut large = false;
        while !bytes.is_empty() {
            large |= room_to_read(input, need);
            let n = (input.capacity() - input.len()).min(bytes.len());
            input.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        large
    }

    #[test]
    fn buffers_grown_for_large_requests_and_replies_are_given_back() {
        let mut input = BytesMut::with_capacity(BUFFER);
        let mut output = Vec::with_capacity(BUFFER);
        let mut large = false;

        // A 3 MB request, and the first bytes of the next.
        let request = vec![b'a'; 3 << 20];
        large |= read_in(&mut input, &request, request.len());
        large |= read_in(&mut input, b"*1\r\n", 1);
        assert!(large && input.capacity() >= 3 << 20);
        output.extend_from_slice(&request);
        output.clear();
        input.advance(request.len());
        shrink(&mut input, &mut large, &mut output);
        // Not while the next request is in it.
        assert!(large && input.capacity() > SHRINK_ABOVE / 2);
        assert!(output.capacity() <= 2 * BUFFER);

        large |= read_in(&mut input, b"$4\r\nPING\r\n", 1);
        input.advance(input.len());
        shrink(&mut input, &mut large, &mut output);
        assert!(!large && input.capacity() <= 2 * BUFFER);
    }

    #[test]
    fn buffers_of_ordinary_traffic_are_kept() {
        let mut input = BytesMut::with_capacity(BUFFER);
        let mut output = Vec::with_capacity(BUFFER);
        let mut large = false;
        let write_at = output.as_ptr();
        // A pipeline of small requests, read in pieces that cut them
        // anywhere: each batch leaves the start of a request behind.
        let request = b"*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
        let stream = request.repeat(10_000);
        for piece in stream.chunks(BUFFER - 5) {
            large |= read_in(&mut input, piece, 1);
            let whole = input.len() / request.len() * request.len();
            input.advance(whole);
            // `+OK\r\n` for each.
            output.extend(std::iter::repeat_n(b'r', whole / request.len() * 5));
            output.clear();
            shrink(&mut input, &mut large, &mut output);
            assert!(!large);
        }
        // The write buffer was never replaced; the read buffer stays small.
        assert_eq!(output.as_ptr(), write_at);
        assert!(input.capacity() + input.len() <= 4 * BUFFER);
    }
}
