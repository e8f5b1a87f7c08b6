//! A TCP relay that delays every chunk it forwards, both ways: a database on the other side
//! of a slow network, for the tests that must meet a request at each stage of its round
//! trips (issue #39: a client hanging up while a `BEGIN` is on its way). On loopback a
//! round trip to PostgreSQL takes a tenth of a millisecond, too short a window to meet by
//! hanging up at chosen moments; across this relay it takes twice `delay`.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A relay from a local port to `target`; it serves until the test process ends.
#[derive(Clone, Copy, Debug)]
pub struct LatencyRelay {
    pub addr: SocketAddr,
}

impl LatencyRelay {
    /// Starts a relay to `target` that holds each chunk `delay` before passing it on. It
    /// runs on a thread and a runtime of its own, so it keeps serving while the test's
    /// runtime is blocked (a test database dropped synchronously goes through it too).
    pub fn start(target: SocketAddr, delay: Duration) -> LatencyRelay {
        let (bound, addr) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the relay");
            runtime.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind the relay");
                let _ = bound.send(listener.local_addr().expect("the relay's address"));
                while let Ok((client, _)) = listener.accept().await {
                    tokio::spawn(relay(client, target, delay));
                }
            });
        });
        LatencyRelay {
            addr: addr.recv().expect("the relay started"),
        }
    }
}

async fn relay(client: TcpStream, target: SocketAddr, delay: Duration) {
    let Ok(server) = TcpStream::connect(target).await else {
        return;
    };
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    tokio::join!(
        forward(client_read, server_write, delay),
        forward(server_read, client_write, delay)
    );
}

/// Copies `from` into `to`, each chunk `delay` after it was read (in order).
async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Duration,
) {
    let (chunks, mut delayed) =
        tokio::sync::mpsc::unbounded_channel::<(tokio::time::Instant, Vec<u8>)>();
    let reader = async move {
        let mut buffer = vec![0u8; 64 * 1024];
        while let Ok(read) = from.read(&mut buffer).await {
            if read == 0
                || chunks
                    .send((tokio::time::Instant::now() + delay, buffer[..read].to_vec()))
                    .is_err()
            {
                break;
            }
        }
    };
    let writer = async move {
        while let Some((due, chunk)) = delayed.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&chunk).await.is_err() {
                break;
            }
        }
        let _ = to.shutdown().await;
    };
    tokio::join!(reader, writer);
}
