//! rust_target.rs - a Rust reference target: per request, K reads of
//! std::time::Instant::now() (clock_gettime CLOCK_MONOTONIC) from
//! read_instant() and one of std::time::SystemTime::now() (CLOCK_REALTIME)
//! from handle_request() itself, both through Rust's std and libc's
//! clock_gettime. Nothing else reads the clock: the pacing sleep is a
//! nanosleep system call.
//!
//!   rust_target K [REQUESTS]   (REQUESTS 0 or absent: until killed)
use std::ptr::{addr_of_mut, write_volatile};
use std::time::{Duration, Instant, SystemTime};

// The results are stored (volatile, so kept), so neither call is a tail
// call: each read's call site is the line that makes it. Written for
// Debian's rustc 1.63 too (no std::hint::black_box there).
static mut LAST_INSTANT: Option<Instant> = None;
static mut LAST_TIME: Option<SystemTime> = None;

#[inline(never)]
fn read_instant() {
    unsafe { write_volatile(addr_of_mut!(LAST_INSTANT), Some(Instant::now())) };
}

#[inline(never)]
fn handle_request(k: u32) {
    for _ in 0..k {
        read_instant();
    }
    unsafe { write_volatile(addr_of_mut!(LAST_TIME), Some(SystemTime::now())) };
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let k: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let requests: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let mut served = 0u64;
    while requests == 0 || served < requests {
        handle_request(k);
        std::thread::sleep(Duration::from_millis(1));
        served += 1;
    }
}
