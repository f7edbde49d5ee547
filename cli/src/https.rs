//! The HTTP client of a server fixed when a command starts (the gateway's upstream, a remote MCP
//! server): HTTPS verified against the system's certificate authorities, or those in the file
//! `SSL_CERT_FILE` names; HTTP/1.1, and HTTP/2 where TLS negotiates it. A user and password in
//! the server's URL are sent as a sensitive `Authorization: Basic` header, never in a URI, where
//! hyper's pool would log them as its key.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::header::{HeaderName, HeaderValue};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// A body sent on: one that streams in, or one made here.
pub(crate) type Body = BoxBody<Bytes, hyper::Error>;

/// The client.
pub(crate) type HttpsClient = Client<HttpsConnector<HttpConnector>, Body>;

/// A client that gives up connecting after `connect_timeout`.
pub(crate) fn client(connect_timeout: Duration) -> Result<HttpsClient, String> {
    // A relay writes each part as it has it: no waiting to fill a packet.
    let mut http = HttpConnector::new();
    http.set_nodelay(true);
    http.set_connect_timeout(Some(connect_timeout));
    http.enforce_http(false);
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_native_roots()
        .map_err(|e| format!("cannot read the system's certificate authorities: {e}"))?
        .https_or_http()
        .enable_http1()
        .enable_http2()
        .wrap_connector(http);
    Ok(Client::builder(TokioExecutor::new()).build(connector))
}

/// Headers of one connection, not of the request: not sent on.
const HOP_BY_HOP: [&str; 9] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// `url` with no user or password in it, to be shown and sent to; and its user and password,
/// if it has them.
pub(crate) fn split_userinfo(url: &str) -> (String, Option<&str>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_owned(), None);
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => (format!("{scheme}://{}", &rest[at + 1..]), Some(&rest[..at])),
        None => (url.to_owned(), None),
    }
}

/// The `Authorization: Basic` value of `userinfo`, `user:password` as a URL holds it
/// (percent-encoded), marked sensitive so that hyper never logs it.
pub(crate) fn basic(userinfo: &str) -> HeaderValue {
    use base64::Engine;
    let decoded = percent_encoding::percent_decode_str(userinfo).collect::<Vec<u8>>();
    let encoded = base64::engine::general_purpose::STANDARD.encode(decoded);
    let mut value =
        HeaderValue::try_from(format!("Basic {encoded}")).expect("base64 is a valid header value");
    value.set_sensitive(true);
    value
}

/// Removes the headers of one connection, those `Connection` names among them.
pub(crate) fn without_hop_by_hop(headers: &mut hyper::HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all("connection")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|name| HeaderName::try_from(name.trim()).ok())
        .collect();
    for name in named.iter().chain(&HOP_BY_HOP.map(HeaderName::from_static)) {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_and_password_leave_the_url_for_a_sensitive_basic_header() {
        let (url, userinfo) = split_userinfo("https://me:p%40ss@api.example.com:8443/v1?x=a@b");
        assert_eq!(url, "https://api.example.com:8443/v1?x=a@b");
        let value = basic(userinfo.unwrap());
        // base64("me:p@ss")
        assert_eq!(value, "Basic bWU6cEBzcw==");
        assert!(value.is_sensitive());
        assert_eq!(
            split_userinfo("http://127.0.0.1:9/a@b"),
            ("http://127.0.0.1:9/a@b".to_owned(), None)
        );
    }
}
