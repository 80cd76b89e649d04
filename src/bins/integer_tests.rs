use super::*;
use crate::bins::{BinSpec, Binning, EdgeBins, ValueKind};

const CLOSED: [Closed; 2] = [Closed::Left, Closed::Right];

/// SplitMix64: reproducible numbers without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// An integer near one of `centres` (within ±`spread`).
    fn near(&mut self, centres: &[i128], spread: i128) -> i128 {
        let c = centres[self.below(centres.len() as u64) as usize];
        c + (self.below(2 * spread as u64 + 1) as i128 - spread)
    }
}

/// numpy's `searchsorted` rule on exact integers, the reference everything is held to.
fn reference(e: &[i128], closed: Closed, x: i128) -> usize {
    let n = e.len() - 1;
    if x < e[0] || x > e[n] {
        return n;
    }
    match closed {
        Closed::Left => (e.iter().filter(|&&v| v <= x).count() - 1).min(n - 1),
        Closed::Right => e.iter().filter(|&&v| v < x).count().max(1) - 1,
    }
}

fn sorted_edges(rng: &mut Rng, centres: &[i128], spread: i128) -> Vec<i128> {
    let m = 2 + rng.below(6) as usize;
    let mut e: Vec<i128> = (0..m).map(|_| rng.near(centres, spread)).collect();
    e.sort();
    e
}

const I64_MIN: i128 = i64::MIN as i128;
const I64_MAX: i128 = i64::MAX as i128;
const U64_MAX: i128 = u64::MAX as i128;
const TWO_53: i128 = 1 << 53;
const TWO_62: i128 = 1 << 62;

#[test]
fn integer_bins_follow_numpys_searchsorted() {
    let mut rng = Rng(7);
    let centres = [0, TWO_53, -TWO_53, TWO_62, I64_MIN, I64_MAX, U64_MAX];
    for _ in 0..20_000 {
        let e = sorted_edges(&mut rng, &centres, 3);
        let x = rng.near(&centres, 4);
        for closed in CLOSED {
            let b = IntBins::new(e.clone(), closed);
            assert_eq!(b.bin(x), reference(&e, closed, x), "{e:?} {closed:?} {x}");
        }
    }
    // The issue's case: numpy gives [1, 2].
    let b = IntBins::new(vec![TWO_62, TWO_62 + 1, TWO_62 + 3], Closed::Left);
    let bins: Vec<usize> = [TWO_62, TWO_62 + 1, TWO_62 + 2]
        .iter()
        .map(|&x| b.bin(x))
        .collect();
    assert_eq!(bins, [0, 1, 1]);
}

/// The module's claim: float64 edges strictly within ±2^53 place every integer (of any size)
/// exactly, through the guide and the binary search alike.
#[test]
fn float64_is_exact_for_edges_within_2_pow_53() {
    let mut rng = Rng(11);
    let bound = TWO_53 - 1;
    let centres = [0, bound, -bound, 1 << 40];
    for case in 0..4_000 {
        let mut e = sorted_edges(&mut rng, &centres, 3);
        e.dedup();
        if e.len() < 2 {
            continue;
        }
        let e: Vec<i128> = e.into_iter().map(|v| v.clamp(-bound, bound)).collect();
        assert!(exact_in_f64(&e));
        for closed in CLOSED {
            let floats = EdgeBins::new(e.iter().map(|&v| v as f64).collect(), closed);
            for _ in 0..16 {
                let x = if case % 2 == 0 {
                    rng.near(&[bound, -bound, TWO_53, -TWO_53], 5)
                } else {
                    rng.near(&[I64_MIN, I64_MAX, U64_MAX, 0], 5)
                }
                .clamp(I64_MIN, U64_MAX);
                // Rust's `as f64` rounds to nearest, as the vector loops and the GPU do.
                let fx = if x > I64_MAX {
                    x as u64 as f64
                } else {
                    x as i64 as f64
                };
                assert_eq!(
                    floats.bin(fx),
                    reference(&e, closed, x),
                    "{e:?} {closed:?} {x}"
                );
            }
        }
    }
}

/// Why the bound is strict: an edge at 2^53 ties with 2^53 + 1 once rounded.
#[test]
fn float64_misplaces_integers_next_to_an_edge_at_2_pow_53() {
    let e = [TWO_53 - 2, TWO_53];
    assert!(!exact_in_f64(&e));
    let x = TWO_53 + 1;
    let floats = EdgeBins::new(e.iter().map(|&v| v as f64).collect(), Closed::Left);
    assert_eq!(
        floats.bin(x as f64),
        0,
        "2^53 + 1 rounds onto the last edge"
    );
    assert_eq!(
        IntBins::new(e.to_vec(), Closed::Left).bin(x),
        1,
        "not counted"
    );
}

/// The GPU's 64-bit form (clamped keys, the domain's ends worked out on the host) places every
/// value of its domain as the exact rule does, edges outside the domain included.
#[test]
fn keyed_bins_agree_with_the_exact_rule_on_every_domain() {
    let mut rng = Rng(13);
    let centres = [
        0,
        -1,
        TWO_53,
        TWO_62,
        I64_MIN,
        I64_MAX,
        U64_MAX,
        I64_MIN - 1,
        U64_MAX + 1,
    ];
    for _ in 0..20_000 {
        let e = sorted_edges(&mut rng, &centres, 2);
        for domain in [Domain::Signed, Domain::Unsigned] {
            for closed in CLOSED {
                for flow in [false, true] {
                    let b = IntBins::new(e.clone(), closed);
                    let keyed = b.keyed(domain, flow).unwrap();
                    for _ in 0..4 {
                        let x = rng.near(&centres, 3).clamp(domain.min(), domain.max());
                        let n = e.len() - 1;
                        let exact = reference(&e, closed, x);
                        let expected = match (flow, exact < n) {
                            (false, _) => exact,
                            (true, true) => exact + 1,
                            (true, false) if x < e[0] => 0,
                            (true, false) => n + 1,
                        };
                        assert_eq!(
                            keyed.bin(closed, flow, domain.key(x)),
                            expected,
                            "{e:?} {domain:?} {closed:?} flow={flow} x={x}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn keys_keep_the_order_of_their_domain() {
    for domain in [Domain::Signed, Domain::Unsigned] {
        let (lo, hi) = (domain.min(), domain.max());
        let xs = [lo, lo + 1, -1, 0, 1, TWO_62, I64_MAX, U64_MAX];
        let mut inside: Vec<i128> = xs.into_iter().filter(|&x| x >= lo && x <= hi).collect();
        inside.sort();
        inside.dedup();
        for w in inside.windows(2) {
            assert!(domain.key(w[0]) < domain.key(w[1]), "{domain:?} {w:?}");
        }
        assert_eq!(domain.key(lo), 0);
        assert_eq!(domain.key(hi), u64::MAX);
    }
}

/// Integer edges resolve to float64 edges where that is proved exact, to integer bins past
/// ±2^53, and to float64 for a float column (numpy's common type is then float64).
#[test]
fn integer_edges_take_the_exact_road_only_where_needed() {
    let resolve = |edges: Vec<i128>, kind| {
        BinSpec::resolve(&Binning::Integers(edges), None, Closed::Left, kind, || {
            unreachable!("edges need no extremes")
        })
        .unwrap()
    };
    assert!(matches!(
        resolve(vec![0, 10, TWO_53 - 1], ValueKind::Integer),
        BinSpec::Edges(_)
    ));
    assert!(matches!(
        resolve(vec![0, 10, TWO_53], ValueKind::Integer),
        BinSpec::Integers(_)
    ));
    assert!(matches!(
        resolve(vec![0, TWO_62], ValueKind::Float64),
        BinSpec::Edges(_)
    ));
    let spec = resolve(vec![TWO_62, TWO_62 + 1, TWO_62 + 3], ValueKind::Integer);
    assert_eq!(spec.len(), 2);
    assert_eq!(spec.width(1), 2.0);
    let decreasing = BinSpec::resolve(
        &Binning::Integers(vec![TWO_62, TWO_62 - 1]),
        None,
        Closed::Left,
        ValueKind::Integer,
        || unreachable!(),
    );
    assert!(decreasing.unwrap_err().to_string().contains("increase"));
}

#[test]
fn integers_travel_as_decimal_text() {
    let b = Binning::Integers(vec![-(1 << 100), 0, U64_MAX]);
    let text = serde_json::to_string(&b).unwrap();
    assert_eq!(
        text,
        r#"{"integers":["-1267650600228229401496703205376","0","18446744073709551615"]}"#
    );
    assert_eq!(serde_json::from_str::<Binning>(&text).unwrap(), b);
    // Float edges stay float edges.
    let f: Binning = serde_json::from_str("[0, 1.5]").unwrap();
    assert_eq!(f, Binning::Edges(vec![0.0, 1.5]));
    let e: ExactInt = serde_json::from_str("\"-9223372036854775809\"").unwrap();
    assert_eq!(e.0, I64_MIN - 1);
    assert!(serde_json::from_str::<ExactInt>("\"1.5\"").is_err());
    assert_eq!(serde_json::from_str::<ExactInt>("7").unwrap().0, 7);
}
