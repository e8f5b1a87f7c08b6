//! Closing a listening socket without resetting a connection its client believes open.
//!
//! When a listening socket closes, the kernel resets every connection whose handshake it
//! has completed but the server has not accepted yet. The client of such a connection
//! has usually sent its request already, and a proxy cannot resend a POST it has sent:
//! it answers 502. Two gaps let such connections exist at the close: tokio learns of
//! queued connections from epoll, which can lag behind the queue under load, and a
//! handshake can complete between the last `accept` and the close. So the server closes
//! in three moves ([`crate::serve_with`]): [`stop_completing_handshakes`], then accept
//! for a round trip or two (the handshakes under way complete and are accepted), then
//! [`take_queued`] with the kernel's own `accept` until the queue is empty, and close.

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpStream};

/// Makes the kernel drop every new connection request (a TCP segment with SYN and without
/// ACK) that reaches `listener`, while the handshakes already under way still complete.
/// A dropped SYN leaves its client waiting: its connect times out with nothing sent, so
/// a proxy tries another instance whatever the method, and after the close a retried SYN
/// is refused. Where the kernel has no socket filters, an error: the close then only
/// narrows the gap.
pub fn stop_completing_handshakes(listener: &TcpListener) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use socket2::{SockFilter, SockRef};
        // A classic BPF socket filter. For TCP the kernel runs it with the packet starting
        // at the TCP header (`tcp_filter`); byte 13 holds the flags. It returns the bytes
        // to keep: 0 drops the segment.
        const LOAD_BYTE_AT: u16 = 0x30; // BPF_LD | BPF_B | BPF_ABS
        const AND: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
        const JUMP_IF_EQUAL: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
        const RETURN: u16 = 0x06; // BPF_RET | BPF_K
        const TCP_FLAGS: u32 = 13;
        const SYN: u32 = 0x02;
        const ACK: u32 = 0x10;
        let program = [
            SockFilter::new(LOAD_BYTE_AT, 0, 0, TCP_FLAGS),
            SockFilter::new(AND, 0, 0, SYN | ACK),
            // SYN alone: a new connection, go on to "drop"; anything else: skip to "keep".
            SockFilter::new(JUMP_IF_EQUAL, 0, 1, SYN),
            SockFilter::new(RETURN, 0, 0, 0),
            SockFilter::new(RETURN, 0, 0, u32::MAX),
        ];
        SockRef::from(listener).attach_filter(&program)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = listener;
        Err(io::Error::from(io::ErrorKind::Unsupported))
    }
}

/// Closes `listener` after taking every connection in its queue, asking the kernel itself
/// (not tokio's record of readiness, which may not have seen the newest ones yet).
pub fn take_queued(listener: TcpListener) -> Vec<(TcpStream, SocketAddr)> {
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(e) => {
            tracing::warn!(error = %e, "could not take the listener's queue before closing it");
            return Vec::new();
        }
    };
    let mut queued = Vec::new();
    loop {
        match listener.accept() {
            Ok((stream, peer)) => {
                // An accepted socket does not inherit the listener's non-blocking mode.
                let stream = stream
                    .set_nonblocking(true)
                    .and_then(|()| TcpStream::from_std(stream));
                match stream {
                    Ok(stream) => queued.push((stream, peer)),
                    Err(e) => {
                        tracing::warn!(error = %e, %peer, "could not serve a queued connection")
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::warn!(error = %e, "accept failed while closing the listener");
                break;
            }
        }
    }
    queued
}
