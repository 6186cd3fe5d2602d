// SPDX-License-Identifier: LGPL-2.1-or-later
// Corpus: a Rust program built with -C panic=abort panicking in corpus_crash_here: the panic
// handler prints the message and calls abort() (SIGABRT).
use std::io::Read;

#[inline(never)]
fn corpus_crash_here(depth: u32) -> u32 {
    if depth < 100 {
        panic!("corpus: panic at depth {}", depth);
    }
    depth
}

#[inline(never)]
fn corpus_crash_caller(depth: u32) -> u32 {
    corpus_crash_here(depth + 1) + 1
}

fn main() {
    if std::env::var("CORPUS_SYNC").map_or(false, |v| v == "1") {
        println!("ready");
        let mut b = [0u8; 1];
        if std::io::stdin().read(&mut b).unwrap_or(0) != 1 {
            std::process::exit(1);
        }
    }
    // a depth the compiler cannot know, so it cannot prove the calls never return
    let depth = std::env::args().count() as u32;
    std::process::exit(corpus_crash_caller(depth) as i32);
}
