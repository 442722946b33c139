//! Serves the demo page and the built package from the gateway's own
//! origin (`--www DIR --pkg DIR`), so the demo needs no second server and no
//! CORS. Only GET of existing files below those folders; no traversal.

use std::path::{Component, Path, PathBuf};

use hyper::Response;

use crate::http::{self, Body};

/// Where static files come from.
#[derive(Clone, Debug, Default)]
pub struct StaticDirs {
    /// The demo page's folder, served at `/`.
    pub www: Option<PathBuf>,
    /// The npm package folder, served at `/pkg/`.
    pub pkg: Option<PathBuf>,
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") | Some("mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("ts") => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// A safe relative path: plain components only.
fn relative(path: &str) -> Option<PathBuf> {
    let rel = PathBuf::from(path.trim_start_matches('/'));
    rel.components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then_some(rel)
}

impl StaticDirs {
    /// The file for a GET of `path`, if one is served.
    pub fn serve(&self, path: &str) -> Option<Response<Body>> {
        let (dir, rest) = match (path.strip_prefix("/pkg/"), &self.pkg, &self.www) {
            (Some(rest), Some(pkg), _) => (pkg, rest),
            (None, _, Some(www)) if path == "/" => (www, "index.html"),
            (None, _, Some(www)) => (www, path),
            _ => return None,
        };
        let file = dir.join(relative(rest)?);
        let bytes = std::fs::read(&file).ok()?;
        Some(
            Response::builder()
                .status(200)
                .header("Content-Type", content_type(&file))
                .header("Cache-Control", "no-store")
                .body(http::full(bytes))
                .expect("valid response"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_traversal_and_serves_files() {
        let dir = std::env::temp_dir().join(format!("wow-static-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("index.html"), "<p>hi</p>").unwrap();
        std::fs::write(dir.join("sub/app.js"), "1").unwrap();
        let dirs = StaticDirs {
            www: Some(dir.clone()),
            pkg: Some(dir.join("sub")),
        };
        assert!(dirs.serve("/").is_some());
        let js = dirs.serve("/pkg/app.js").unwrap();
        assert_eq!(
            js.headers()["Content-Type"],
            "text/javascript; charset=utf-8"
        );
        assert!(dirs.serve("/../etc/passwd").is_none());
        assert!(dirs.serve("/sub/../../x").is_none());
        assert!(dirs.serve("/missing.html").is_none());
        assert!(StaticDirs::default().serve("/").is_none());
    }
}
