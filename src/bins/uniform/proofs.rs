//! Proofs made on this thread lately, keyed by everything a proof is derived from: a hit is the
//! proof that proving again would give.

use std::cell::RefCell;

use super::Origin;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Key {
    pub bits: [u64; 6],
    pub n: usize,
    pub flags: [bool; 4],
    pub origin: Origin,
}

/// `(literal, margin as float64)`: exact for float32 margins too.
type Proved = (bool, f64);

const REMEMBERED: usize = 8;

thread_local! {
    static PROVED: RefCell<Vec<(Key, Proved)>> = const { RefCell::new(Vec::new()) };
}

pub(super) fn recall(key: Key) -> Option<Proved> {
    PROVED.with_borrow(|p| p.iter().find(|(k, _)| *k == key).map(|&(_, proved)| proved))
}

pub(super) fn remember(key: Key, proved: Proved) {
    PROVED.with_borrow_mut(|p| {
        if p.len() == REMEMBERED {
            p.remove(0);
        }
        p.push((key, proved));
    });
}
