//! What the gateway does, for Prometheus: counted always, served with `--metrics ADDRESS` at
//! `/metrics`, in the OpenMetrics text format, on a listener of its own, never on the proxied
//! routes.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;
use tool_output_cap::wire::{Api, ResultCut};

use super::TARGET;

/// A tool result's labels: its tool and the API of its request.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    api: &'static str,
    tool: String,
}

/// A request's labels: its API (`other` for any other route) and the status it got.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    api: &'static str,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ApiLabels {
    api: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

/// A block's labels: the API of its request and its type.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    api: &'static str,
    kind: String,
}

/// The most block types counted each under its own label; the rest, and any type that is not
/// a short name, are counted as `other`: a client's types never grow the metrics without bound.
const MOST_KINDS: usize = 64;

/// Why a body went on as it came, unread.
#[derive(Debug, Clone, Copy)]
pub(super) enum Unread {
    /// Over `--max-body-bytes` as it came.
    OverLimit,
    /// Over `--max-body-bytes` decoded.
    DecodedOverLimit,
    /// Compressed in a way that is not read, or not decodable.
    Undecodable,
    /// Not UTF-8.
    NotUtf8,
    /// Not a JSON object.
    NotJson,
    /// Capping it failed.
    Failed,
}

impl Unread {
    fn label(self) -> &'static str {
        match self {
            Unread::OverLimit => "over_limit",
            Unread::DecodedOverLimit => "decoded_over_limit",
            Unread::Undecodable => "undecodable",
            Unread::NotUtf8 => "not_utf8",
            Unread::NotJson => "not_json",
            Unread::Failed => "failed",
        }
    }
}

/// The gateway's metrics, and the registry that encodes them.
#[derive(Debug)]
pub(super) struct Metrics {
    registry: Registry,
    results_cut: Family<ResultLabels, Counter>,
    tokens_before: Family<ResultLabels, Counter>,
    tokens_after: Family<ResultLabels, Counter>,
    cuts_cached: Family<ResultLabels, Counter>,
    results_elided: Family<ResultLabels, Counter>,
    requests: Family<RequestLabels, Counter>,
    added: Family<ApiLabels, Histogram>,
    unread: Family<ReasonLabels, Counter>,
    unpriced: Family<KindLabels, Counter>,
    unpriced_kinds: std::sync::Mutex<std::collections::BTreeSet<String>>,
    rate_limit: Gauge,
    cache_bytes: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            registry: Registry::with_prefix("tool_output_cap_gateway"),
            results_cut: Family::default(),
            tokens_before: Family::default(),
            tokens_after: Family::default(),
            cuts_cached: Family::default(),
            results_elided: Family::default(),
            requests: Family::default(),
            // 0.1 ms to about 6.5 s.
            added: Family::new_with_constructor(|| {
                Histogram::new(exponential_buckets(0.0001, 2.0, 17))
            }),
            unread: Family::default(),
            unpriced: Family::default(),
            unpriced_kinds: Default::default(),
            rate_limit: Gauge::default(),
            cache_bytes: Gauge::default(),
        }
        .registered()
    }
}

/// The label of `api`, or `other` for a route of no model API.
fn api_label(api: Option<Api>) -> &'static str {
    api.map_or("other", Api::name)
}

impl Metrics {
    /// These metrics, each registered with its help.
    fn registered(mut self) -> Self {
        let registry = &mut self.registry;
        registry.register(
            "results_cut",
            "Tool results cut to their limit, by API and tool",
            self.results_cut.clone(),
        );
        registry.register(
            "tokens_before",
            "Tokens of the results cut, as they came",
            self.tokens_before.clone(),
        );
        registry.register(
            "tokens_after",
            "Tokens of the results cut, as they went up, note included",
            self.tokens_after.clone(),
        );
        registry.register(
            "cuts_cached",
            "Cuts taken from the cache, made for an earlier or a concurrent request",
            self.cuts_cached.clone(),
        );
        registry.register(
            "results_elided",
            "Older results that gave way whole to a request's budget",
            self.results_elided.clone(),
        );
        registry.register(
            "requests",
            "Requests, by API (other for any other route) and the status the client got",
            self.requests.clone(),
        );
        registry.register(
            "added_seconds",
            "Time the gateway took before sending a model API's request on: reading and capping it",
            self.added.clone(),
        );
        registry.register(
            "bodies_unread",
            "Request bodies sent on as they came, unread, by reason",
            self.unread.clone(),
        );
        registry.register(
            "unpriced_blocks",
            "Blocks of tool results sent on uncounted, neither text nor media the gateway prices, by API and type",
            self.unpriced.clone(),
        );
        registry.register(
            "rate_limit_tokens",
            "The per-minute input-token limit the upstream last reported; 0 before one",
            self.rate_limit.clone(),
        );
        registry.register(
            "cache_bytes",
            "Bytes of cuts the cache holds, at most --cache-bytes",
            self.cache_bytes.clone(),
        );
        self
    }

    /// Counts `cuts`, made in a request of `api`.
    pub(super) fn cuts(&self, api: Api, cuts: &[ResultCut]) {
        for cut in cuts {
            let labels = ResultLabels {
                api: api.name(),
                tool: cut.tool.clone().unwrap_or_default(),
            };
            self.results_cut.get_or_create(&labels).inc();
            let figures = &cut.truncation;
            let after = (figures.original_tokens - figures.dropped_tokens) as u64;
            self.tokens_before
                .get_or_create(&labels)
                .inc_by(figures.original_tokens as u64);
            self.tokens_after.get_or_create(&labels).inc_by(after);
            if cut.cached {
                self.cuts_cached.get_or_create(&labels).inc();
            }
            if cut.elided {
                self.results_elided.get_or_create(&labels).inc();
            }
        }
    }

    /// Counts the blocks of `unpriced`, each type with how many, of a request of `api`.
    pub(super) fn unpriced(&self, api: Api, unpriced: &[(String, usize)]) {
        let mut kinds = self
            .unpriced_kinds
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        for (kind, blocks) in unpriced {
            let named = kind.len() <= 40
                && kind
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            let known = kinds.contains(kind)
                || (named && kinds.len() < MOST_KINDS && kinds.insert(kind.clone()));
            let kind = if known {
                kind.clone()
            } else {
                "other".to_owned()
            };
            let labels = KindLabels {
                api: api.name(),
                kind,
            };
            self.unpriced.get_or_create(&labels).inc_by(*blocks as u64);
        }
    }

    /// Counts a request of `api` whose client got `status`.
    pub(super) fn request(&self, api: Option<Api>, status: StatusCode) {
        let labels = RequestLabels {
            api: api_label(api),
            status: status.as_u16(),
        };
        self.requests.get_or_create(&labels).inc();
    }

    /// Records the time the gateway added to a request of `api` before sending it on.
    pub(super) fn added(&self, api: Api, time: Duration) {
        let labels = ApiLabels { api: api.name() };
        self.added
            .get_or_create(&labels)
            .observe(time.as_secs_f64());
    }

    /// Counts a body sent on unread, and why.
    pub(super) fn unread(&self, why: Unread) {
        let labels = ReasonLabels {
            reason: why.label(),
        };
        self.unread.get_or_create(&labels).inc();
    }

    /// Records the rate limit the upstream reported.
    pub(super) fn rate_limit(&self, tokens: usize) {
        self.rate_limit
            .set(i64::try_from(tokens).unwrap_or(i64::MAX));
    }

    /// Records the bytes the cut cache holds.
    pub(super) fn cache_bytes(&self, bytes: usize) {
        self.cache_bytes
            .set(i64::try_from(bytes).unwrap_or(i64::MAX));
    }

    /// The metrics in the OpenMetrics text format.
    fn encoded(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String does not fail");
        text
    }
}

/// Serves `metrics` at `/metrics` on `address`, in the background, for as long as the runtime.
pub(super) async fn serve(address: SocketAddr, metrics: Arc<Metrics>) -> Result<(), String> {
    let listener = TcpListener::bind(address)
        .await
        .map_err(|e| format!("cannot listen on {address} for --metrics: {e}"))?;
    if !address.ip().is_loopback() {
        tracing::warn!(
            target: TARGET,
            "serving metrics on {address}, beyond this machine: they name the tools and routes \
             of every client"
        );
    }
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            };
            let metrics = Arc::clone(&metrics);
            let service = service_fn(move |request| {
                let metrics = Arc::clone(&metrics);
                async move { Ok::<_, std::convert::Infallible>(answer(&metrics, &request)) }
            });
            tokio::spawn(async move {
                let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok(())
}

/// `GET /metrics`, or a 404.
fn answer(metrics: &Metrics, request: &Request<hyper::body::Incoming>) -> Response<Full<Bytes>> {
    if request.method() != Method::GET || request.uri().path() != "/metrics" {
        let mut response = Response::new(Full::new(Bytes::from_static(b"only /metrics\n")));
        *response.status_mut() = StatusCode::NOT_FOUND;
        return response;
    }
    let mut response = Response::new(Full::new(Bytes::from(metrics.encoded())));
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_recorded_is_in_the_text_with_its_help() {
        let metrics = Metrics::default();
        metrics.request(None, StatusCode::OK);
        metrics.unread(Unread::NotJson);
        metrics.rate_limit(30_000);
        metrics.cache_bytes(4096);
        metrics.added(Api::Gemini, Duration::from_millis(3));
        metrics.unpriced(
            Api::AnthropicMessages,
            &[("video".to_owned(), 2), ("a type?".to_owned(), 1)],
        );
        let text = metrics.encoded();
        for name in [
            "requests",
            "added_seconds",
            "bodies_unread",
            "rate_limit_tokens",
            "cache_bytes",
            "unpriced_blocks",
        ] {
            assert!(
                text.contains(&format!("# HELP tool_output_cap_gateway_{name} ")),
                "{name}:\n{text}"
            );
        }
        for line in [
            r#"tool_output_cap_gateway_requests_total{api="other",status="200"} 1"#,
            r#"tool_output_cap_gateway_bodies_unread_total{reason="not_json"} 1"#,
            r#"tool_output_cap_gateway_unpriced_blocks_total{api="anthropic",kind="video"} 2"#,
            r#"tool_output_cap_gateway_unpriced_blocks_total{api="anthropic",kind="other"} 1"#,
            "tool_output_cap_gateway_rate_limit_tokens 30000",
            "tool_output_cap_gateway_cache_bytes 4096",
            r#"tool_output_cap_gateway_added_seconds_bucket{le="0.0016",api="gemini"} 0"#,
            r#"tool_output_cap_gateway_added_seconds_bucket{le="0.0032",api="gemini"} 1"#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line}:\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
    }
}
