//! One sort for the whole module: every ordering the core needs (object
//! keys for fingerprints, intents by creation) is a sort of the same
//! `(number, text, index)` triples, so the module carries one instantiation
//! of the standard library's sort instead of one per element type (each is
//! a few kilobytes of code).

/// The indices of `keys` in ascending order of `(number, text)`; equal keys
/// keep their order.
pub(crate) fn ascending(keys: Vec<(u64, &str)>) -> Vec<usize> {
    let mut triples: Vec<(u64, &str, usize)> = keys
        .into_iter()
        .enumerate()
        .map(|(i, (n, t))| (n, t, i))
        .collect();
    triples.sort_unstable();
    triples.into_iter().map(|(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::ascending;
    use crate::protocol::test_support::test;

    #[test]
    fn orders_by_number_then_text_and_keeps_ties_in_order() {
        let keys = [(2, "a"), (1, "b"), (1, "a"), (2, "a"), (0, "z")];
        assert_eq!(ascending(keys.to_vec()), vec![4, 2, 1, 0, 3]);
        assert!(ascending(Vec::new()).is_empty());
    }
}
