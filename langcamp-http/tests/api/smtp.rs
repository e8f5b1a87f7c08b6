//! An in-process SMTP sink for integration tests.
//!
//! The mail worker talks real SMTP (lettre, no TLS) to this server, so tests check what a
//! recipient would actually get: envelope, headers and decoded text, not an internal queue.
//! It speaks just enough SMTP for lettre: EHLO/HELO, AUTH PLAIN/LOGIN (any credentials are
//! accepted), MAIL, RCPT, DATA, RSET, NOOP and QUIT. `stop` and `start_on` simulate an SMTP
//! outage and the server coming back on the same port.
#![allow(dead_code)]

use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

/// A running SMTP sink on `127.0.0.1:port`. Dropping it (or calling `stop`) shuts it down.
#[derive(Debug)]
pub struct SmtpSink {
    pub port: u16,
    shared: Arc<Shared>,
    server: JoinHandle<()>,
}

#[derive(Debug, Default)]
struct Shared {
    messages: Mutex<Vec<ReceivedMail>>,
    arrived: Notify,
}

impl SmtpSink {
    /// Binds 127.0.0.1:0 and serves in a background task.
    pub async fn start() -> SmtpSink {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("SMTP sink cannot bind 127.0.0.1:0");
        Self::serve(listener)
    }

    /// Binds a given port (used to start a server "coming up later" on a port chosen before).
    ///
    /// Retries for a few seconds while the port is still in use, e.g. by a sink stopped a
    /// moment ago whose listener the runtime has not dropped yet.
    pub async fn start_on(port: u16) -> SmtpSink {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match TcpListener::bind(("127.0.0.1", port)).await {
                Ok(listener) => return Self::serve(listener),
                Err(error)
                    if error.kind() == io::ErrorKind::AddrInUse && Instant::now() < deadline =>
                {
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(error) => panic!("SMTP sink cannot bind 127.0.0.1:{port}: {error}"),
            }
        }
    }

    fn serve(listener: TcpListener) -> SmtpSink {
        let port = listener
            .local_addr()
            .expect("SMTP sink listener has no local address")
            .port();
        let shared = Arc::new(Shared::default());
        let server = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        SmtpSink {
            port,
            shared,
            server,
        }
    }

    /// All messages received so far.
    pub fn messages(&self) -> Vec<ReceivedMail> {
        self.shared
            .messages
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Waits until at least n messages arrived or the timeout passes; returns what arrived.
    pub async fn wait_for(&self, n: usize, timeout: Duration) -> Vec<ReceivedMail> {
        let deadline = Instant::now() + timeout;
        loop {
            // Created before looking, so a message stored in between still wakes us.
            let arrived = self.shared.arrived.notified();
            let messages = self.messages();
            if messages.len() >= n {
                return messages;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return self.messages();
            }
        }
    }

    /// Stops accepting connections and frees the port.
    ///
    /// Open connections are cut. The listener is closed as soon as the runtime runs the
    /// cancelled server task, i.e. at the caller's next `.await`.
    pub fn stop(self) {
        drop(self);
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        // Aborting the server task drops the listener and the JoinSet of connections.
        self.server.abort();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        match listener.accept().await {
            Ok((stream, _peer)) => {
                connections.spawn(serve_connection(stream, Arc::clone(&shared)));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
        // Forget finished connections.
        while connections.try_join_next().is_some() {}
    }
}

/// One SMTP session. Returns when the client quits or disconnects.
async fn serve_connection(stream: TcpStream, shared: Arc<Shared>) -> io::Result<()> {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    writer
        .write_all(b"220 localhost ESMTP langcamp test sink\r\n")
        .await?;

    let mut from = String::new();
    let mut to: Vec<String> = Vec::new();

    while let Some(line) = read_line(&mut reader).await? {
        let command = line.trim_end_matches(['\r', '\n']);
        let (verb, argument) = command.split_once(' ').unwrap_or((command, ""));
        let reply: &str = match verb.to_ascii_uppercase().as_str() {
            "EHLO" => {
                "250-localhost greets you\r\n250-8BITMIME\r\n250-SMTPUTF8\r\n\
                  250-SIZE 104857600\r\n250 AUTH PLAIN LOGIN\r\n"
            }
            "HELO" => "250 localhost\r\n",
            "AUTH" => {
                let mut words = argument.split_whitespace();
                let mechanism = words.next().unwrap_or("").to_ascii_uppercase();
                let has_initial_response = words.next().is_some();
                match mechanism.as_str() {
                    "PLAIN" => {
                        if !has_initial_response {
                            writer.write_all(b"334 \r\n").await?;
                            if read_line(&mut reader).await?.is_none() {
                                return Ok(());
                            }
                        }
                        "235 2.7.0 Authentication successful\r\n"
                    }
                    "LOGIN" => {
                        if !has_initial_response {
                            // base64 of "Username:"
                            writer.write_all(b"334 VXNlcm5hbWU6\r\n").await?;
                            if read_line(&mut reader).await?.is_none() {
                                return Ok(());
                            }
                        }
                        // base64 of "Password:"
                        writer.write_all(b"334 UGFzc3dvcmQ6\r\n").await?;
                        if read_line(&mut reader).await?.is_none() {
                            return Ok(());
                        }
                        "235 2.7.0 Authentication successful\r\n"
                    }
                    _ => "504 5.5.4 Unrecognized authentication type\r\n",
                }
            }
            "MAIL" => {
                from = angle_address(argument);
                to.clear();
                "250 2.1.0 OK\r\n"
            }
            "RCPT" => {
                to.push(angle_address(argument));
                "250 2.1.5 OK\r\n"
            }
            "DATA" => {
                writer
                    .write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n")
                    .await?;
                let mut data = String::new();
                loop {
                    let Some(line) = read_line(&mut reader).await? else {
                        // Cut off in the middle of DATA: the message was not accepted.
                        return Ok(());
                    };
                    if line.trim_end_matches(['\r', '\n']) == "." {
                        break;
                    }
                    data.push_str(line.strip_prefix('.').unwrap_or(line.as_str()));
                }
                let mail = ReceivedMail {
                    from: std::mem::take(&mut from),
                    to: std::mem::take(&mut to),
                    data,
                };
                shared
                    .messages
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(mail);
                shared.arrived.notify_waiters();
                "250 2.0.0 OK: queued\r\n"
            }
            "RSET" => {
                from.clear();
                to.clear();
                "250 2.0.0 OK\r\n"
            }
            "NOOP" => "250 2.0.0 OK\r\n",
            "VRFY" => "252 2.1.5 Cannot VRFY user\r\n",
            "STARTTLS" => "454 4.7.0 TLS not available\r\n",
            "QUIT" => {
                writer.write_all(b"221 2.0.0 Bye\r\n").await?;
                return Ok(());
            }
            _ => "502 5.5.2 Command not implemented\r\n",
        };
        writer.write_all(reply.as_bytes()).await?;
    }
    Ok(())
}

/// Reads one line including its line ending; `None` at end of stream.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R) -> io::Result<Option<String>> {
    let mut buf = Vec::new();
    if reader.read_until(b'\n', &mut buf).await? == 0 {
        return Ok(None);
    }
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// `FROM:<a@example.com> BODY=8BITMIME` -> `a@example.com`; `FROM:<>` -> ``.
fn angle_address(argument: &str) -> String {
    let path = argument
        .split_once(':')
        .map_or(argument, |(_, path)| path)
        .trim();
    if let Some(start) = path.find('<')
        && let Some(len) = path[start + 1..].find('>')
    {
        return path[start + 1..start + 1 + len].to_string();
    }
    path.split_whitespace().next().unwrap_or("").to_string()
}

/// One message as the sink received it.
#[derive(Clone, Debug)]
pub struct ReceivedMail {
    /// Envelope sender (`MAIL FROM`), empty for the null sender.
    pub from: String,
    /// Envelope recipients (`RCPT TO`), in order.
    pub to: Vec<String>,
    /// The raw message after DATA, dot-unstuffed, with its CRLF line endings.
    pub data: String,
}

impl ReceivedMail {
    /// Header value (case-insensitive name), unfolded; None if absent.
    ///
    /// RFC 2047 encoded words (`=?utf-8?b?...?=`, used for non-ASCII subjects and names) are
    /// decoded.
    pub fn header(&self, name: &str) -> Option<String> {
        let (headers, _) = split_entity(&self.data);
        header_value(&headers, name).map(|value| decode_encoded_words(&value))
    }

    /// Names of all top-level headers in order.
    pub fn header_names(&self) -> Vec<String> {
        let (headers, _) = split_entity(&self.data);
        headers.into_iter().map(|(name, _)| name).collect()
    }

    /// Decoded text of the text/plain part (handles multipart/alternative, quoted-printable and
    /// base64 transfer encodings, which lettre produces).
    ///
    /// Line endings are turned into `\n`. Empty if the message has no text/plain part.
    pub fn text_body(&self) -> String {
        find_part(message_without_terminator(&self.data), "text/plain").unwrap_or_default()
    }

    /// Decoded text of the text/html part, if any. Line endings are turned into `\n`.
    pub fn html_body(&self) -> Option<String> {
        find_part(message_without_terminator(&self.data), "text/html")
    }
}

/// The line ending before the terminating `.` belongs to the terminator as far as the body is
/// concerned: lettre sends `body` + `\r\n.\r\n`.
fn message_without_terminator(data: &str) -> &str {
    strip_line_ending(data)
}

fn strip_line_ending(text: &str) -> &str {
    text.strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(text)
}

/// Splits a MIME entity into its unfolded headers (name, value) and its body.
fn split_entity(raw: &str) -> (Vec<(String, String)>, &str) {
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut rest = raw;
    while !rest.is_empty() {
        let (line, next) = match rest.find('\n') {
            Some(end) => (&rest[..end], &rest[end + 1..]),
            None => (rest, ""),
        };
        rest = next;
        let line = line.strip_suffix('\r').unwrap_or(line);
        if line.is_empty() {
            return (headers, rest);
        }
        if line.starts_with([' ', '\t']) {
            // Folded continuation: unfolding removes only the line break.
            if let Some((_, value)) = headers.last_mut() {
                value.push_str(line);
            }
        } else if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_string(), value.to_string()));
        }
    }
    (headers, rest)
}

fn header_value(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(candidate, _)| candidate.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.trim().to_string())
}

/// Finds the first non-attachment part of type `wanted` (depth first) and decodes it.
fn find_part(raw: &str, wanted: &str) -> Option<String> {
    let (headers, body) = split_entity(raw);
    let content_type = header_value(&headers, "Content-Type").unwrap_or_default();
    let mut params = content_type.split(';');
    let mime_type = params.next().unwrap_or("").trim().to_ascii_lowercase();
    let mime_type = if mime_type.is_empty() {
        "text/plain".to_string()
    } else {
        mime_type
    };

    if mime_type.starts_with("multipart/") {
        let boundary = params.find_map(|param| {
            let (key, value) = param.split_once('=')?;
            key.trim()
                .eq_ignore_ascii_case("boundary")
                .then(|| value.trim().trim_matches('"').to_string())
        })?;
        return multipart_parts(body, &boundary)
            .into_iter()
            .find_map(|part| find_part(part, wanted));
    }

    let is_attachment = header_value(&headers, "Content-Disposition")
        .is_some_and(|value| value.to_ascii_lowercase().starts_with("attachment"));
    if mime_type != wanted || is_attachment {
        return None;
    }
    let encoding = header_value(&headers, "Content-Transfer-Encoding")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let bytes = match encoding.as_str() {
        "base64" => base64_decode(body),
        "quoted-printable" => quoted_printable_decode(body),
        _ => body.as_bytes().to_vec(),
    };
    Some(String::from_utf8_lossy(&bytes).replace("\r\n", "\n"))
}

/// The bodies of a multipart entity's parts, without preamble and epilogue. The line break
/// before each delimiter belongs to the delimiter (RFC 2046).
fn multipart_parts<'a>(body: &'a str, boundary: &str) -> Vec<&'a str> {
    let delimiter = format!("--{boundary}");
    let close = format!("--{boundary}--");
    let mut parts = Vec::new();
    let mut part_start: Option<usize> = None;
    let mut offset = 0;
    for line in body.split_inclusive('\n') {
        let content = line.trim_end();
        if content == delimiter || content == close {
            if let Some(start) = part_start {
                parts.push(strip_line_ending(&body[start..offset]));
            }
            if content == close {
                return parts;
            }
            part_start = Some(offset + line.len());
        }
        offset += line.len();
    }
    // No closing delimiter: take what is there.
    if let Some(start) = part_start {
        parts.push(strip_line_ending(&body[start..]));
    }
    parts
}

/// Decodes RFC 2047 encoded words; whitespace between adjacent encoded words is dropped.
fn decode_encoded_words(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    // Bytes of a run of adjacent encoded words: a character may be split across two of them.
    let mut pending: Vec<u8> = Vec::new();
    let mut rest = value;
    while !rest.is_empty() {
        let after_space = rest.trim_start();
        let space = &rest[..rest.len() - after_space.len()];
        let word_len = after_space
            .find(char::is_whitespace)
            .unwrap_or(after_space.len());
        let (word, after_word) = after_space.split_at(word_len);
        rest = after_word;
        if let Some(bytes) = decode_encoded_word(word) {
            if pending.is_empty() {
                out.push_str(space);
            }
            pending.extend_from_slice(&bytes);
        } else {
            out.push_str(&String::from_utf8_lossy(&pending));
            pending.clear();
            out.push_str(space);
            out.push_str(word);
        }
    }
    out.push_str(&String::from_utf8_lossy(&pending));
    out
}

/// `=?charset?B|Q?text?=` -> bytes (the charset is assumed to be UTF-8, as lettre writes).
fn decode_encoded_word(word: &str) -> Option<Vec<u8>> {
    let inner = word.strip_prefix("=?")?.strip_suffix("?=")?;
    let mut fields = inner.splitn(3, '?');
    let _charset = fields.next()?;
    let encoding = fields.next()?;
    let text = fields.next()?;
    match encoding {
        "B" | "b" => Some(base64_decode(text)),
        "Q" | "q" => Some(quoted_printable_decode(&text.replace('_', " "))),
        _ => None,
    }
}

/// Base64 (standard or URL-safe alphabet); skips line breaks and other non-alphabet bytes and
/// stops at padding. Also reads the payload of a JWT (URL-safe, unpadded).
pub fn base64_decode(input: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() / 4 * 3);
    let mut acc: u32 = 0;
    let mut bits: u32 = 0;
    for byte in input.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            b'=' => break,
            _ => continue,
        };
        acc = (acc << 6) | u32::from(value);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1u32 << bits) - 1;
        }
    }
    out
}

/// Quoted-printable: `=XX` escapes and `=` soft line breaks; anything malformed is kept as is.
fn quoted_printable_decode(input: &str) -> Vec<u8> {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'=' {
            match (bytes.get(i + 1).copied(), bytes.get(i + 2).copied()) {
                (Some(b'\r'), Some(b'\n')) => {
                    i += 3;
                    continue;
                }
                (Some(b'\n'), _) => {
                    i += 2;
                    continue;
                }
                (Some(high), Some(low)) => {
                    if let (Some(high), Some(low)) = (hex_value(high), hex_value(low)) {
                        out.push((high << 4) | low);
                        i += 3;
                        continue;
                    }
                }
                _ => {}
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        _ => None,
    }
}
