//! The `upload` scheme: the bytes of a file the person pasted or dropped, sent by the page as a
//! request body (`POST upload://localhost/<upload id>`, at most
//! [`UPLOAD_BODY_MAX`](switchboard_service::attachments::UPLOAD_BODY_MAX) a request). An IPC call
//! under the isolation pattern costs the window's thread about a quarter of a millisecond per KiB
//! (its body is encrypted and written out as a list of numbers); a request body is handed to the
//! shell by the web engine, off the page's thread.
//!
//! Invariants: the scheme only appends to an upload the page opened through IPC (`upload_begin`,
//! which the isolation hook saw), within its declared size; it reads nothing and answers with no
//! data but the error the IPC call would have given; a request from another origin is refused.

use switchboard_service::Service;
use switchboard_service::ipc::IpcError;
use tauri::http::{Method, Request, Response, StatusCode, header};

/// The scheme's name (`upload://localhost/…`; `http://upload.localhost/…` on Windows).
pub const SCHEME: &str = "upload";

/// The origins the app's own page has (Linux and macOS, then Windows).
const APP_ORIGINS: [&str; 2] = ["tauri://localhost", "http://tauri.localhost"];

/// Answers one request of the scheme.
pub fn respond(service: &Service, request: &Request<Vec<u8>>) -> Response<Vec<u8>> {
    let origin = request.headers().get(header::ORIGIN).and_then(|o| o.to_str().ok());
    // The engine sends the page's origin; a request without one did not come from a page.
    if origin.is_some_and(|o| !APP_ORIGINS.contains(&o)) {
        return plain(StatusCode::FORBIDDEN, None, "This page may not upload files to Switchboard.");
    }
    if request.method() != Method::POST {
        return plain(StatusCode::METHOD_NOT_ALLOWED, origin, "Uploads are sent with POST.");
    }
    let id = request.uri().path().trim_start_matches('/');
    // Where the page's slice ends in the file: a body the engine shortened or dropped would leave
    // the file with a hole, so it ends the upload instead.
    let end = request.uri().query().and_then(|q| q.strip_prefix("end=")).and_then(|n| n.parse::<u64>().ok());
    match service.upload_bytes(id, request.body()) {
        Ok(received) if end.is_some_and(|end| end != received) => {
            service.upload_cancel(id);
            let message =
                format!("The file arrived incomplete ({received} of {} bytes): attach it again.", end.unwrap_or(0));
            let error = IpcError { kind: switchboard_core::ErrorKind::BadRequest, message, retryable: true };
            json_error(origin, &error)
        }
        Ok(received) => {
            let mut response = plain(StatusCode::OK, origin, "");
            *response.body_mut() = received.to_string().into_bytes();
            response
        }
        Err(e) => json_error(origin, &IpcError::from(e)),
    }
}

/// The error the IPC call would have given, as JSON.
fn json_error(origin: Option<&str>, error: &IpcError) -> Response<Vec<u8>> {
    let mut response = plain(StatusCode::BAD_REQUEST, origin, "");
    *response.body_mut() = serde_json::to_vec(error).unwrap_or_default();
    response.headers_mut().insert(header::CONTENT_TYPE, header::HeaderValue::from_static("application/json"));
    response
}

/// A response with `text` for a body, readable by `origin` (the page reads the status and an
/// error's text across the scheme boundary).
fn plain(status: StatusCode, origin: Option<&str>, text: &str) -> Response<Vec<u8>> {
    let mut builder = Response::builder().status(status).header(header::CONTENT_TYPE, "text/plain; charset=utf-8");
    if let Some(origin) = origin {
        builder = builder.header(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    }
    builder.body(text.as_bytes().to_vec()).unwrap_or_else(|_| Response::new(Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use switchboard_secrets::MemoryStore;
    use switchboard_store::Store;

    fn service() -> Service {
        Service::new(Store::open_in_memory().unwrap(), Arc::new(MemoryStore::new())).unwrap()
    }

    fn post(id: &str, origin: Option<&str>, body: &[u8]) -> Request<Vec<u8>> {
        post_to(&format!("upload://localhost/{id}"), origin, body)
    }

    fn post_to(uri: &str, origin: Option<&str>, body: &[u8]) -> Request<Vec<u8>> {
        let mut b = Request::builder().method(Method::POST).uri(uri);
        if let Some(o) = origin {
            b = b.header(header::ORIGIN, o);
        }
        b.body(body.to_vec()).unwrap()
    }

    #[test]
    fn a_body_is_appended_to_the_upload_the_page_opened() {
        let service = service();
        let id = service.upload_begin("notes.txt", 6).unwrap();
        let r = respond(&service, &post(&id, Some("tauri://localhost"), b"hel"));
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(r.body(), b"3");
        assert_eq!(r.headers()[header::ACCESS_CONTROL_ALLOW_ORIGIN], "tauri://localhost");
        let r = respond(&service, &post_to(&format!("upload://localhost/{id}?end=6"), None, b"lo!"));
        assert_eq!((r.status(), r.body().as_slice()), (StatusCode::OK, &b"6"[..]));
    }

    #[test]
    fn a_body_shorter_than_its_slice_ends_the_upload() {
        let service = service();
        let id = service.upload_begin("notes.txt", 6).unwrap();
        // The page sent bytes 0..4; three arrived.
        let r = respond(&service, &post_to(&format!("upload://localhost/{id}?end=4"), None, b"hel"));
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let error: IpcError = serde_json::from_slice(r.body()).unwrap();
        assert!(error.message.contains("arrived incomplete (3 of 4 bytes)"), "{}", error.message);
        assert_eq!(service.upload_bytes(&id, b"l").unwrap_err().kind, switchboard_core::ErrorKind::NotFound);
    }

    #[test]
    fn another_origin_another_method_or_an_unknown_upload_is_refused() {
        let service = service();
        let id = service.upload_begin("notes.txt", 6).unwrap();
        let r = respond(&service, &post(&id, Some("https://evil.example"), b"hel"));
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(r.headers().get(header::ACCESS_CONTROL_ALLOW_ORIGIN).is_none());
        let get = Request::builder().uri(format!("upload://localhost/{id}")).body(Vec::new()).unwrap();
        assert_eq!(respond(&service, &get).status(), StatusCode::METHOD_NOT_ALLOWED);
        // Nothing of those reached the upload: all six bytes still fit.
        assert_eq!(respond(&service, &post(&id, None, b"hello!")).status(), StatusCode::OK);

        let r = respond(&service, &post("upload-99", Some("tauri://localhost"), b"x"));
        assert_eq!(r.status(), StatusCode::BAD_REQUEST);
        let error: IpcError = serde_json::from_slice(r.body()).unwrap();
        assert_eq!(error.kind, switchboard_core::ErrorKind::NotFound);
    }
}
