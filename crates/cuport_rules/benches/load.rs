//! Load time of the built-in tables: `cargo bench -p cuport_rules --bench load`.
fn main() {
    divan::main();
}

#[divan::bench]
fn builtin_rule_set() -> usize {
    match cuport_rules::RuleSet::builtin() {
        Ok(set) => set.sources().len(),
        Err(_) => 0,
    }
}

#[divan::bench]
fn lookup_hit_and_miss(bencher: divan::Bencher) {
    let Ok(set) = cuport_rules::RuleSet::builtin() else {
        return;
    };
    bencher.bench(|| {
        let hit = set
            .lookup(cuport_model::Target::Hip, divan::black_box("cudaMemcpy"))
            .is_some();
        let miss = set
            .lookup(
                cuport_model::Target::Hip,
                divan::black_box("cudaNoSuchThing"),
            )
            .is_some();
        hit ^ miss
    });
}
