//! The one model API the gateway forwards to: fixed when it starts, so that no request can
//! choose another host.

use std::time::Duration;

use hyper::body::Incoming;
use hyper::header::{HeaderValue, AUTHORIZATION, HOST};
use hyper::{Request, Response, Uri};

pub(super) use crate::https::Body;
use crate::https::{basic, client, split_userinfo, without_hop_by_hop, HttpsClient};

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
    client: HttpsClient,
}

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
        Ok(Upstream {
            scheme,
            authority,
            basic: userinfo.map(basic),
            prefix: uri.path().trim_end_matches('/').to_owned(),
            client: client(connect_timeout)?,
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
