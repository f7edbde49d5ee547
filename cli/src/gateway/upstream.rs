//! The one model API the gateway forwards to: fixed when it starts, so that no request can
//! choose another host.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use hyper::body::Incoming;
use hyper::header::{HeaderName, HeaderValue, AUTHORIZATION, HOST};
use hyper::{Request, Response, Uri};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// A body the gateway sends on: the host's, as it streams in, or a capped one.
pub(super) type Body = BoxBody<Bytes, hyper::Error>;

/// The upstream: its scheme and authority, the path its API is under, and a client for it.
#[derive(Debug, Clone)]
pub(super) struct Upstream {
    scheme: hyper::http::uri::Scheme,
    /// The host and port alone: a user and password in `--upstream` are never in a URI, where
    /// hyper's pool would log them as its key.
    authority: hyper::http::uri::Authority,
    /// The user and password of `--upstream`, as a sensitive `Basic` value, for requests that
    /// bring no `Authorization` of their own.
    basic: Option<HeaderValue>,
    /// The upstream URL's path, without its trailing `/`: the gateway's `/` stands for it.
    prefix: String,
    client: Client<HttpsConnector<HttpConnector>, Body>,
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

impl Upstream {
    /// The upstream at `url`, an `http` or `https` URL; HTTPS is verified against the system's
    /// certificate authorities, or those in the file `SSL_CERT_FILE` names.
    pub(super) fn new(url: &str, connect_timeout: Duration) -> Result<Self, String> {
        let (shown, userinfo) = split_userinfo(url);
        let uri: Uri = shown
            .parse()
            .map_err(|e| format!("--upstream {shown:?} is not a URL: {e}"))?;
        let (Some(scheme), Some(authority)) = (uri.scheme().cloned(), uri.authority().cloned())
        else {
            return Err(format!(
                "--upstream {shown:?} must be an http:// or https:// URL"
            ));
        };
        if scheme.as_str() != "http" && scheme.as_str() != "https" {
            return Err(format!(
                "--upstream {shown:?} must be an http:// or https:// URL"
            ));
        }
        if uri.query().is_some() {
            return Err(format!("--upstream {shown:?} must not have a query"));
        }
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
        Ok(Upstream {
            scheme,
            authority,
            basic: userinfo.map(basic),
            prefix: uri.path().trim_end_matches('/').to_owned(),
            client: Client::builder(TokioExecutor::new()).build(connector),
        })
    }

    /// Sends `request`, whose URI is the gateway's path and query, to the upstream.
    pub(super) async fn send(
        &self,
        mut request: Request<Body>,
    ) -> Result<Response<Incoming>, hyper_util::client::legacy::Error> {
        let path = request
            .uri()
            .path_and_query()
            .map_or("/", |path| path.as_str());
        let uri = Uri::builder()
            .scheme(self.scheme.clone())
            .authority(self.authority.clone())
            .path_and_query(format!("{}{path}", self.prefix))
            .build()
            .expect("a valid scheme, authority and path make a valid URI");
        *request.uri_mut() = uri;
        // Whatever version the host spoke (HTTP/2 among them), the client speaks the upstream's
        // own: HTTP/1.1, or HTTP/2 where TLS negotiates it.
        *request.version_mut() = hyper::Version::HTTP_11;
        // The client names the upstream's host itself.
        request.headers_mut().remove(HOST);
        if let Some(basic) = &self.basic {
            if !request.headers().contains_key(AUTHORIZATION) {
                request.headers_mut().insert(AUTHORIZATION, basic.clone());
            }
        }
        without_hop_by_hop(request.headers_mut());
        self.client.request(request).await
    }
}

/// `url` with no user or password in it, to be shown and sent to; and its user and password,
/// if it has them.
pub(super) fn split_userinfo(url: &str) -> (String, Option<&str>) {
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
fn basic(userinfo: &str) -> HeaderValue {
    use base64::Engine;
    let decoded = percent_encoding::percent_decode_str(userinfo).collect::<Vec<u8>>();
    let encoded = base64::engine::general_purpose::STANDARD.encode(decoded);
    let mut value =
        HeaderValue::try_from(format!("Basic {encoded}")).expect("base64 is a valid header value");
    value.set_sensitive(true);
    value
}

/// Removes the headers of one connection, those `Connection` names among them.
pub(super) fn without_hop_by_hop(headers: &mut hyper::HeaderMap) {
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
