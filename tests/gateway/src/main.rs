//! `wow-test-gateway`: a faithful Wow command gateway for tests and the demo.
//!
//! `wow-test-gateway --listen 127.0.0.1:0 --db PATH [--seed N]` prints
//! `listening on http://HOST:PORT` as its first line on stdout.

mod domain;
mod faults;
mod gateway;
mod http;
mod openapi;
mod query;
mod static_files;
mod store;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;

fn usage() -> ! {
    eprintln!("usage: wow-test-gateway [--listen HOST:PORT] [--db PATH] [--seed N] [--retry-backoff-ms N] [--stage-gap-ms N] [--www DIR] [--pkg DIR] [--wow 9|8.10|10] [--gateway-only] [--query-scope]\n       wow-test-gateway --print-openapi   (the OpenAPI document it serves at /v3/api-docs)");
    std::process::exit(2)
}

#[tokio::main]
async fn main() {
    let mut listen = "127.0.0.1:8080".to_owned();
    let mut db: Option<PathBuf> = None;
    let mut seed: Option<u64> = None;
    let mut backoff_ms = 500u64;
    let mut gap_ms = 5u64;
    let mut static_dirs = static_files::StaticDirs::default();
    let mut wow = query::Wow::Nine;
    let mut gateway_only = false;
    let mut query_scope = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        match arg.as_str() {
            "--listen" => listen = value(),
            "--db" => db = Some(PathBuf::from(value())),
            "--seed" => seed = Some(value().parse().unwrap_or_else(|_| usage())),
            "--retry-backoff-ms" => backoff_ms = value().parse().unwrap_or_else(|_| usage()),
            "--stage-gap-ms" => gap_ms = value().parse().unwrap_or_else(|_| usage()),
            "--www" => static_dirs.www = Some(PathBuf::from(value())),
            "--pkg" => static_dirs.pkg = Some(PathBuf::from(value())),
            "--wow" => {
                wow = match value().as_str() {
                    "9" => query::Wow::Nine,
                    "8.10" => query::Wow::EightTen,
                    "10" => query::Wow::Ten,
                    _ => usage(),
                }
            }
            "--gateway-only" => gateway_only = true,
            "--query-scope" => query_scope = true,
            "--print-openapi" => {
                let doc = serde_json::to_string_pretty(&openapi::document(wow.version()))
                    .expect("serialisable");
                println!("{doc}");
                return;
            }
            _ => usage(),
        }
    }
    let db = db.unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "wow-test-gateway-{}-{}.sqlite",
            std::process::id(),
            seed.unwrap_or(0)
        ))
    });
    let store = store::EventStore::open(&db).unwrap_or_else(|e| {
        eprintln!("cannot open {}: {e}", db.display());
        std::process::exit(1)
    });
    let app = gateway::App::new(
        store,
        gateway::Settings {
            retry_backoff: Duration::from_millis(backoff_ms),
            stage_gap: Duration::from_millis(gap_ms),
            precheck_ttl: Duration::from_secs(60),
            static_dirs,
            wow,
            gateway_only,
            query_scope,
        },
        seed.unwrap_or(0),
    );
    let listener = tokio::net::TcpListener::bind(&listen)
        .await
        .unwrap_or_else(|e| {
            eprintln!("cannot listen on {listen}: {e}");
            std::process::exit(1)
        });
    println!(
        "listening on http://{}",
        listener.local_addr().expect("bound")
    );
    eprintln!("event store: {}", db.display());
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            continue;
        };
        // Stage events are small writes that must leave at once: without
        // TCP_NODELAY, Nagle holds each behind the peer's delayed ACK (~40 ms).
        let _ = socket.set_nodelay(true);
        let app = app.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| Arc::clone(&app).serve(req));
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}
