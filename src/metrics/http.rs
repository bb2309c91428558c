//! The little HTTP/1.1 the endpoint speaks, as pure functions: a request head read
//! into what it asks for (or the status that refuses it), and the bytes of the answer.
//! One request per connection, answered with `Connection: close`: nothing a scraper
//! needs is lost, and no state is kept between requests. The sockets are
//! `server.rs`'s; every limit here is tested without a network.

use super::encode::Format;

/// The most bytes a request head (request line and headers) may take. A scrape's is
/// a few hundred bytes (Prometheus's: about 250); 8 KiB is what common servers allow
/// for one header line.
pub const MAX_HEAD: usize = 8 * 1024;

/// The statuses the endpoint answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    BadRequest,
    NotFound,
    MethodNotAllowed,
    UriTooLong,
    HeadersTooLarge,
    /// Every connection the endpoint allows is taken by a scrape under way.
    Unavailable,
    VersionNotSupported,
}

impl Status {
    pub fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::BadRequest => 400,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::UriTooLong => 414,
            Status::HeadersTooLarge => 431,
            Status::Unavailable => 503,
            Status::VersionNotSupported => 505,
        }
    }

    fn reason(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::BadRequest => "Bad Request",
            Status::NotFound => "Not Found",
            Status::MethodNotAllowed => "Method Not Allowed",
            Status::UriTooLong => "URI Too Long",
            Status::HeadersTooLarge => "Request Header Fields Too Large",
            Status::Unavailable => "Service Unavailable",
            Status::VersionNotSupported => "HTTP Version Not Supported",
        }
    }

    /// The body of an error: the reason, and where the metrics are for a 404.
    fn text(self) -> String {
        match self {
            Status::NotFound => "Not Found: the metrics are at /metrics\n".to_string(),
            other => format!("{}\n", other.reason()),
        }
    }
}

/// A request for the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scrape {
    /// `HEAD`: the headers without the body.
    pub head_only: bool,
    pub format: Format,
}

/// What the bytes read so far on a connection amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// Not a whole head yet, and within [`MAX_HEAD`]: read on.
    Incomplete,
    Scrape(Scrape),
    /// Answer with this error status and close.
    Refused(Status),
}

/// Reads the head at the start of `bytes` (what a connection sent so far; anything
/// after the head, a body or a pipelined request, is ignored).
pub fn read_head(bytes: &[u8]) -> Read {
    let Some(end) = head_end(bytes) else {
        return match bytes.len() >= MAX_HEAD {
            // No end of line at all: the request line alone is too long.
            true if !bytes[..MAX_HEAD].contains(&b'\n') => Read::Refused(Status::UriTooLong),
            true => Read::Refused(Status::HeadersTooLarge),
            false => Read::Incomplete,
        };
    };
    if end > MAX_HEAD {
        return Read::Refused(Status::HeadersTooLarge);
    }
    let Ok(head) = std::str::from_utf8(&bytes[..end]) else {
        return Read::Refused(Status::BadRequest);
    };
    match route(head) {
        Ok(scrape) => Read::Scrape(scrape),
        Err(status) => Read::Refused(status),
    }
}

/// Where the head ends: the index just past its empty line (`\r\n\r\n`, or bare
/// `\n`s, which RFC 9112 lets a server accept).
fn head_end(bytes: &[u8]) -> Option<usize> {
    let mut line_start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'\n' {
            continue;
        }
        let line = &bytes[line_start..i];
        if (line.is_empty() || line == b"\r") && line_start > 0 {
            return Some(i + 1);
        }
        line_start = i + 1;
    }
    None
}

/// The request line and headers into a scrape, or the status refusing them.
fn route(head: &str) -> Result<Scrape, Status> {
    let mut lines = head.lines();
    let request_line = lines.next().unwrap_or_default();
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Status::BadRequest);
    };
    match version {
        "HTTP/1.1" | "HTTP/1.0" => {}
        v if v.starts_with("HTTP/") => return Err(Status::VersionNotSupported),
        _ => return Err(Status::BadRequest),
    }
    if method.is_empty() || !target.starts_with('/') {
        return Err(Status::BadRequest);
    }
    let mut accept = None;
    for line in lines.take_while(|l| !l.is_empty()) {
        let Some((name, value)) = line.split_once(':') else {
            return Err(Status::BadRequest);
        };
        if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
            return Err(Status::BadRequest);
        }
        if accept.is_none() && name.eq_ignore_ascii_case("accept") {
            accept = Some(value.trim());
        }
    }
    let path = target.split('?').next().unwrap_or_default();
    if path != "/metrics" {
        return Err(Status::NotFound);
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Err(Status::MethodNotAllowed),
    };
    Ok(Scrape {
        head_only,
        format: Format::accepted(accept),
    })
}

/// The whole answer to a scrape: `body` is the rendered metrics in `scrape.format`.
pub fn answer(scrape: Scrape, body: &str) -> Vec<u8> {
    // A HEAD's length is the one a GET would get (RFC 9110, 9.3.2).
    let mut out = response_head(Status::Ok, scrape.format.content_type(), body.len(), "");
    if !scrape.head_only {
        out.extend_from_slice(body.as_bytes());
    }
    out
}

/// The whole answer refusing a request with `status`.
pub fn refusal(status: Status) -> Vec<u8> {
    let text = status.text();
    let allow = match status {
        Status::MethodNotAllowed => "Allow: GET, HEAD\r\n",
        _ => "",
    };
    let mut out = response_head(status, "text/plain; charset=utf-8", text.len(), allow);
    out.extend_from_slice(text.as_bytes());
    out
}

/// The status line and headers; `more` is further header lines, each with its CRLF.
fn response_head(status: Status, content_type: &str, length: usize, more: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\
         Connection: close\r\n{more}\r\n",
        status.code(),
        status.reason()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(bytes: &[u8]) -> Status {
        match read_head(bytes) {
            Read::Refused(s) => s,
            other => panic!("{other:?} for {:?}", String::from_utf8_lossy(bytes)),
        }
    }

    #[test]
    fn a_scrape_in_either_format() {
        let prometheus = b"GET /metrics HTTP/1.1\r\nHost: h:9450\r\nUser-Agent: Prometheus/2\r\n\
            accept: application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5\r\n\r\n";
        assert_eq!(
            read_head(prometheus),
            Read::Scrape(Scrape {
                head_only: false,
                format: Format::OpenMetrics
            })
        );
        let curl = b"GET /metrics?x=1 HTTP/1.0\nAccept: */*\n\n";
        assert_eq!(
            read_head(curl),
            Read::Scrape(Scrape {
                head_only: false,
                format: Format::Text
            })
        );
        let head = read_head(b"HEAD /metrics HTTP/1.1\r\n\r\n");
        assert!(matches!(
            head,
            Read::Scrape(Scrape {
                head_only: true,
                ..
            })
        ));
    }

    #[test]
    fn a_head_not_ended_yet_is_read_on() {
        for partial in [
            &b""[..],
            b"GET",
            b"GET /metrics HTTP/1.1\r\n",
            b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r",
        ] {
            assert_eq!(read_head(partial), Read::Incomplete);
        }
        // What follows the head (a pipelined request) is not read.
        let two = b"GET /metrics HTTP/1.1\r\n\r\nGET /nothing HTTP/1.1\r\n\r\n";
        assert!(matches!(read_head(two), Read::Scrape(_)));
    }

    #[test]
    fn heads_beyond_the_limit_are_refused() {
        // An endless request line: 414 as soon as MAX_HEAD bytes hold no line end.
        let mut line = b"GET /".to_vec();
        line.resize(MAX_HEAD - 1, b'a');
        assert_eq!(read_head(&line), Read::Incomplete);
        line.push(b'a');
        assert_eq!(refused(&line), Status::UriTooLong);
        // Headers without end: 431.
        let mut headers = b"GET /metrics HTTP/1.1\r\n".to_vec();
        while headers.len() < MAX_HEAD {
            headers.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaa\r\n");
        }
        assert_eq!(refused(&headers), Status::HeadersTooLarge);
        // A whole head, but too long.
        headers.extend_from_slice(b"\r\n");
        assert_eq!(refused(&headers), Status::HeadersTooLarge);
        // Just within the limit.
        let mut fits = b"GET /metrics HTTP/1.1\r\nX: ".to_vec();
        fits.resize(MAX_HEAD - 4, b'b');
        fits.extend_from_slice(b"\r\n\r\n");
        assert!(matches!(read_head(&fits), Read::Scrape(_)));
    }

    #[test]
    fn other_paths_methods_and_malformed_heads() {
        for (head, status) in [
            (&b"GET / HTTP/1.1\r\n\r\n"[..], Status::NotFound),
            (b"GET /metricsx HTTP/1.1\r\n\r\n", Status::NotFound),
            (b"POST /metrics HTTP/1.1\r\n\r\n", Status::MethodNotAllowed),
            (
                b"GET /metrics HTTP/2.0\r\n\r\n",
                Status::VersionNotSupported,
            ),
            (b"GET /metrics\r\n\r\n", Status::BadRequest),
            (b"GET  /metrics HTTP/1.1\r\n\r\n", Status::BadRequest),
            (b"GET metrics HTTP/1.1\r\n\r\n", Status::BadRequest),
            (
                b"GET /metrics HTTP/1.1\r\nno colon\r\n\r\n",
                Status::BadRequest,
            ),
            (
                b"GET /metrics HTTP/1.1\r\nBad Name: x\r\n\r\n",
                Status::BadRequest,
            ),
            (
                b"GET /metrics HTTP/1.1\r\nX: \xff\r\n\r\n",
                Status::BadRequest,
            ),
            (b"\r\n\r\n", Status::BadRequest),
        ] {
            assert_eq!(refused(head), status, "{:?}", String::from_utf8_lossy(head));
        }
    }

    #[test]
    fn answers_carry_their_length_and_close() {
        let scrape = Scrape {
            head_only: false,
            format: Format::Text,
        };
        let text = String::from_utf8(answer(scrape, "a 1\n")).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("\r\nContent-Length: 4\r\nConnection: close\r\n\r\na 1\n"));
        assert!(text.contains(&format!(
            "Content-Type: {}\r\n",
            Format::Text.content_type()
        )));
        let head_only = Scrape {
            head_only: true,
            ..scrape
        };
        let text = String::from_utf8(answer(head_only, "a 1\n")).unwrap();
        assert!(text.ends_with("Content-Length: 4\r\nConnection: close\r\n\r\n"));
        let text = String::from_utf8(refusal(Status::MethodNotAllowed)).unwrap();
        assert!(text.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"));
        assert!(text.ends_with("close\r\nAllow: GET, HEAD\r\n\r\nMethod Not Allowed\n"));
        let text = String::from_utf8(refusal(Status::HeadersTooLarge)).unwrap();
        assert!(text.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
    }
}
