//! The extremes scan against the scalar fold, bit for bit.

use super::*;

fn same_bits<T: Value>(a: Option<(T, T)>, b: Option<(T, T)>) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

fn check_min_max<T: Value>(xs: &[T], what: &str) {
    for start in [0usize, 1, 2, 5, 13] {
        if start > xs.len() {
            continue;
        }
        let xs = &xs[start..];
        let expected = scalar_min_max(xs);
        for isa in paths() {
            let got = min_max_on(isa, xs);
            assert!(
                same_bits(got, expected),
                "{what} from {start}: {isa:?} gives {got:?}, the scalar fold {expected:?}"
            );
        }
    }
}

#[test]
fn min_max_matches_the_scalar_fold_bit_for_bit() {
    let mut rng = Rng(0x5EED_0008);
    check_min_max::<f64>(&[], "empty");
    check_min_max(&[f64::NAN; 100], "all NaN");
    check_min_max(&[f32::NAN; 100], "all NaN f32");
    for case in 0..300 {
        let len = rng.pick(&[1, 3, 17, 64, 65, 200, 1000, 5000]) + rng.below(40);
        let style = rng.below(6);
        let xs: Vec<f64> = (0..len)
            .map(|_| match style {
                // Zeros of both signs at the minimum and the maximum, in every order.
                0 => rng.pick(&[0.0, -0.0, 1.0, -1.0, f64::NAN]),
                1 => rng.pick(&[0.0, -0.0, 2.0, f64::NAN]),
                2 => rng.pick(&[0.0, -0.0, -3.0]),
                3 => rng.pick(&SPECIALS),
                4 => f64::from_bits(rng.next()),
                _ => (rng.unit() - 0.5) * 1e3,
            })
            .collect();
        check_min_max(&xs, &format!("case {case} style {style}"));
        let xs32: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        check_min_max(&xs32, &format!("case {case} style {style} f32"));
        let ints: Vec<i64> = (0..len)
            .map(|_| rng.next() as i64 >> rng.below(64))
            .collect();
        check_min_max(&ints, "i64");
        let u: Vec<u64> = ints.iter().map(|&x| x as u64).collect();
        check_min_max(&u, "u64");
        let b: Vec<i8> = ints.iter().map(|&x| x as i8).collect();
        check_min_max(&b, "i8");
        let w: Vec<u32> = ints.iter().map(|&x| x as u32).collect();
        check_min_max(&w, "u32");
    }
}
