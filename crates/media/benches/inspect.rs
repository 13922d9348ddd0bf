//! Attaching the two big files: a 12-megapixel JPEG photo and a 20 MB PDF (400 pages of
//! text, each with an incompressible image stream), both generated (`switchboard_media::samples`).
//! Reports, per file, the time `inspect` takes (median of the runs) and the peak memory it allocates above what
//! was live before (a counting allocator), against the file's size; and `fit_image` of the
//! photo for each API.
//!
//! `cargo bench -p switchboard-media --bench inspect` (`MEDIA_BENCH_RUNS=3` for a quicker run).
#![allow(unsafe_code)] // the counting allocator

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use switchboard_media::samples::{pdf, photo};
use switchboard_media::{ImageLimits, fit_image, inspect};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size > layout.size() {
                let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Median time and the largest peak above the live bytes before each run.
fn measure(runs: usize, mut f: impl FnMut()) -> (Duration, usize) {
    let mut times = Vec::new();
    let mut peak = 0;
    for _ in 0..runs {
        let before = LIVE.load(Ordering::Relaxed);
        PEAK.store(before, Ordering::Relaxed);
        let start = Instant::now();
        f();
        times.push(start.elapsed());
        peak = peak.max(PEAK.load(Ordering::Relaxed) - before);
    }
    times.sort();
    (times[times.len() / 2], peak)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn main() {
    let runs: usize = std::env::var("MEDIA_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(7);
    // Shared, as the app hands them over: a PDF's parser thread holds them without a copy.
    let photo = Arc::new(photo());
    let pdf = Arc::new(pdf());
    println!("inspect, median of {runs} runs; peak = most allocated above what was live before the call");
    for (name, bytes) in [("12-megapixel JPEG (4000 × 3000)", &photo), ("20 MB PDF (400 pages)", &pdf)] {
        let mut kept = None;
        let (time, peak) = measure(runs, || kept = Some(inspect("bench", Arc::clone(bytes)).unwrap()));
        let got = kept.unwrap();
        println!(
            "  {name}: {:.1} MB file, {time:.0?}, peak {:.1} MB ({:.1}× the file); thumbnail {} bytes, text {} bytes",
            mb(bytes.len()),
            mb(peak),
            peak as f64 / bytes.len() as f64,
            got.thumbnail.map_or(0, |t| t.len()),
            got.text.map_or(0, |t| t.len()),
        );
    }
    println!("fit_image of the photo");
    for api in ["openai", "anthropic", "gemini"] {
        let mut out = 0;
        let (time, peak) =
            measure(runs, || out = fit_image(&photo, "image/jpeg", ImageLimits::for_api(api)).unwrap().1.len());
        println!("  {api}: {time:.0?}, peak {:.1} MB, {:.2} MB sent", mb(peak), mb(out));
    }
}
