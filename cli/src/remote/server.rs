//! The remote server: its URL, the headers sent with every request, and the session it gave.

use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode, Uri};

use super::answer::{messages, Messages};
use crate::https::{basic, client, split_userinfo, Body, HttpsClient};

/// The session header a server gives on its answer to `initialize`, and wants back on every
/// request after it.
const SESSION: &str = "mcp-session-id";
/// The header of the protocol revision a session speaks.
const VERSION: &str = "mcp-protocol-version";

/// The remote server.
#[derive(Debug)]
pub(crate) struct Remote {
    /// Its URL, with no user or password in it: what messages and logs name.
    url: String,
    uri: Uri,
    client: HttpsClient,
    /// `--header`'s, and a user and password of the URL as `Basic`, each sensitive.
    headers: HeaderMap,
    session: Mutex<Option<HeaderValue>>,
    version: Mutex<Option<HeaderValue>>,
}

/// The server could not be reached, or refused the request: what to tell the host, naming the
/// server's URL, never a header's value.
#[derive(Debug)]
pub(crate) struct Unreachable(pub(crate) String);

impl Remote {
    /// The server at `url`, an `http` or `https` URL, sent `headers` (`Name: value`, a value's
    /// `${VAR}` the environment variable VAR) with every request.
    pub(crate) fn new(
        url: &str,
        headers: &[String],
        connect_timeout: Duration,
    ) -> Result<Self, String> {
        let (shown, userinfo) = split_userinfo(url);
        let uri: Uri = shown
            .parse()
            .map_err(|e| format!("--url {shown:?} is not a URL: {e}"))?;
        if !matches!(uri.scheme_str(), Some("http" | "https")) || uri.authority().is_none() {
            return Err(format!(
                "--url {shown:?} must be an http:// or https:// URL"
            ));
        }
        let mut sent = HeaderMap::new();
        if let Some(userinfo) = userinfo {
            sent.insert(AUTHORIZATION, basic(userinfo));
        }
        for header in headers {
            let (name, value) = header_of(header)?;
            sent.append(name, value);
        }
        Ok(Remote {
            url: shown,
            uri,
            client: client(connect_timeout)?,
            headers: sent,
            session: Mutex::default(),
            version: Mutex::default(),
        })
    }

    /// Its URL, as messages name it.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Notes the protocol revision the session speaks, sent with every request after it.
    pub(crate) fn set_version(&self, version: &str) {
        *lock(&self.version) = HeaderValue::try_from(version).ok();
    }

    /// POSTs one `message` of the host's, of the protocol revision `version` when it says its
    /// own (a request of the 2026-07-28 revision): the messages of the server's answer.
    pub(crate) async fn post(
        &self,
        message: Bytes,
        version: Option<HeaderValue>,
    ) -> Result<Messages, Unreachable> {
        let body = Full::new(message).map_err(|never| match never {}).boxed();
        let mut request = self.request(Method::POST, body);
        request
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        request.headers_mut().insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        if let Some(version) = version {
            request.headers_mut().insert(VERSION, version);
        }
        let response = self.send(request).await?;
        if let Some(session) = response.headers().get(SESSION) {
            *lock(&self.session) = Some(session.clone());
        }
        messages(response, &self.url).await
    }

    /// Opens the server's own stream of messages (GET): `None` when it offers none (it answers
    /// 405, or refuses the request).
    pub(crate) async fn listen(&self) -> Result<Option<Messages>, Unreachable> {
        let mut request = self.request(Method::GET, empty());
        request
            .headers_mut()
            .insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let response = self.sent(request).await?;
        if !response.status().is_success() {
            return Ok(None);
        }
        messages(response, &self.url).await.map(Some)
    }

    /// Ends the session, if there is one (DELETE), within `within`.
    pub(crate) async fn end(&self, within: Duration) {
        if lock(&self.session).is_none() {
            return;
        }
        let request = self.request(Method::DELETE, empty());
        match tokio::time::timeout(within, self.send(request)).await {
            Ok(Ok(_)) => tracing::debug!(url = self.url, "ended the session"),
            Ok(Err(Unreachable(why))) => tracing::debug!("cannot end the session: {why}"),
            Err(_) => tracing::debug!(url = self.url, "the session's end was not answered"),
        }
    }

    /// A request of `method` to the server's URL with `body`, and the headers of every request.
    fn request(&self, method: Method, body: Body) -> Request<Body> {
        let mut request = Request::new(body);
        *request.method_mut() = method;
        *request.uri_mut() = self.uri.clone();
        let headers = request.headers_mut();
        headers.extend(self.headers.clone());
        for (name, value) in [(SESSION, &self.session), (VERSION, &self.version)] {
            if let Some(value) = lock(value).clone() {
                headers.insert(name, value);
            }
        }
        request
    }

    /// Sends `request`: the server's answer when it is a success, else what to tell the host.
    async fn send(&self, request: Request<Body>) -> Result<Response<Incoming>, Unreachable> {
        let response = self.sent(request).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let url = &self.url;
        Err(Unreachable(match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => format!(
                "{url} refused the request: {status} (sign in, or pass a token with --header)"
            ),
            StatusCode::NOT_FOUND if lock(&self.session).take().is_some() => {
                *lock(&self.version) = None;
                format!("{url} has ended the session ({status}): initialize again")
            }
            _ => match said(response).await {
                Some(said) => format!("{url} answered {status}: {said}"),
                None => format!("{url} answered {status}"),
            },
        }))
    }

    /// Sends `request`: the server's answer, whatever its status; an error when it cannot be
    /// reached, saying why (its causes, a TLS failure among them).
    async fn sent(&self, request: Request<Body>) -> Result<Response<Incoming>, Unreachable> {
        self.client.request(request).await.map_err(|error| {
            let mut why = error.to_string();
            let mut source = std::error::Error::source(&error);
            while let Some(inner) = source {
                why = format!("{why}: {inner}");
                source = inner.source();
            }
            Unreachable(format!("cannot reach {}: {why}", self.url))
        })
    }
}

/// The message of the JSON-RPC error an answer that is no success carries, if it carries one
/// (its first 64 KiB read): what the server said of the request.
async fn said(response: Response<Incoming>) -> Option<String> {
    let body = http_body_util::Limited::new(response.into_body(), 64 * 1024);
    let body = body.collect().await.ok()?.to_bytes();
    let error: serde_json::Value = serde_json::from_slice(&body).ok()?;
    error["error"]["message"].as_str().map(str::to_owned)
}

/// `header`, `Name: value`, as a header, its value's `${VAR}` the environment variable VAR, and
/// marked sensitive: never logged. An error names the header, never its value.
fn header_of(header: &str) -> Result<(HeaderName, HeaderValue), String> {
    let Some((name, value)) = header.split_once(':') else {
        return Err(format!(
            "--header must be `Name: value`, found no `:` in {:?}",
            header.split(' ').next().unwrap_or_default()
        ));
    };
    let name = name.trim();
    let name = HeaderName::try_from(name)
        .map_err(|_| format!("--header {name:?} is not a header name"))?;
    let value = expanded(value.trim(), &name)?;
    let mut value = HeaderValue::try_from(value)
        .map_err(|_| format!("--header {name}: its value is not a header value"))?;
    value.set_sensitive(true);
    Ok((name, value))
}

/// `value` with each `${VAR}` the environment variable VAR; an error for one that is not set.
fn expanded(value: &str, name: &HeaderName) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        let Some(end) = rest[at..].find('}') else {
            break;
        };
        let var = &rest[at + 2..at + end];
        let found = std::env::var(var)
            .map_err(|_| format!("--header {name}: the environment variable {var} is not set"))?;
        out.push_str(&rest[..at]);
        out.push_str(&found);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn empty() -> Body {
    Empty::new().map_err(|never| match never {}).boxed()
}

fn lock<T>(value: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    value
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_takes_its_value_from_the_environment_and_is_never_shown() {
        std::env::set_var("TOOL_OUTPUT_CAP_TEST_TOKEN", "s3cret");
        let (name, value) =
            header_of("Authorization: Bearer ${TOOL_OUTPUT_CAP_TEST_TOKEN}").unwrap();
        assert_eq!(name, AUTHORIZATION);
        assert_eq!(value, "Bearer s3cret");
        assert!(value.is_sensitive());
        let unset = header_of("X-Key: ${TOOL_OUTPUT_CAP_TEST_UNSET}").unwrap_err();
        assert_eq!(
            unset,
            "--header x-key: the environment variable TOOL_OUTPUT_CAP_TEST_UNSET is not set"
        );
        let no_colon = header_of("Bearer s3cret").unwrap_err();
        assert!(!no_colon.contains("s3cret"), "{no_colon}");
        assert!(header_of("Bad Name: x")
            .unwrap_err()
            .contains("is not a header name"));
    }
}
