//! What the shell asks of the person's computer, apart from the commands: the native dialog that
//! confirms widening changes, the system opener for links and folders, the guard that keeps the
//! window on the app's own content, the window's saved size and place, and the GL environment on
//! a machine without a GPU, the allocator's return of large buffers, the trace a refused call leaves in the log, and the scheme that takes
//! the bytes of pasted and dropped files.
//!
//! Invariant: nothing here decides anything about the product. Each adapter hands a question or a
//! checked value to the operating system; the commands and the app's start-up are the only users.

pub mod dialog;
pub mod gl;
pub mod memory;
pub mod navigation;
pub mod opener;
pub mod refusals;
pub mod upload_scheme;
pub mod window_state;
