//! The app process's allocator: a large buffer goes back to the system when it is freed.
//!
//! glibc's malloc raises its mmap threshold each time it frees a large mapped block (up to
//! 32 MiB), after which the buffers of an attached file (its bytes, its decoded pixels, a request
//! carrying it) come from the heap and stay in the process once freed: after attaching and
//! sending a 20 MB PDF and a 12 MP photo the app kept about 57 MB (the desktop bench `attach`).
//! A fixed threshold keeps every allocation over 128 KiB in a mapping of its own, unmapped on free.
//!
//! Invariant: set first thing in `run`, before any other thread exists; the web engine's processes
//! and every program the app starts keep their own allocator's defaults.

/// Allocations over this many bytes get a mapping of their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 128 * 1024;

/// Fixes glibc's mmap threshold (elsewhere: nothing to do).
pub fn return_large_frees() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[allow(unsafe_code)]
    // SAFETY: `mallopt` only sets a parameter of glibc's malloc; it is called before any other
    // thread of the process exists, so no allocation runs concurrently with it.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}
