//! The AMDGPU processors LLVM 22 knows, their alias names, the target features
//! each supports, and the generic family the HIP runtime falls back to; and
//! those LLVM's main branch knows besides ([`UPSTREAM`]), which the readers
//! accept (code objects' `e_flags`, the devices and entries of the runtime's
//! choice) while what the bundler writes and checks stays LLVM 22's.

/// One AMDGPU processor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Processor {
    /// Canonical name, e.g. `gfx90a`.
    pub name: &'static str,
    /// Other names LLVM accepts for it, e.g. `fiji` for `gfx803`.
    pub aliases: &'static [&'static str],
    /// Whether `xnack` may be given in its target ID.
    pub xnack: bool,
    /// Whether `sramecc` may be given in its target ID.
    pub sramecc: bool,
    /// The generic processor whose code the HIP runtime also loads on it.
    pub generic: Option<&'static str>,
}

const fn p(
    name: &'static str,
    aliases: &'static [&'static str],
    xnack: bool,
    sramecc: bool,
    generic: Option<&'static str>,
) -> Processor {
    Processor {
        name,
        aliases,
        xnack,
        sramecc,
        generic,
    }
}

const G9: Option<&str> = Some("gfx9-generic");
const G94: Option<&str> = Some("gfx9-4-generic");
const G101: Option<&str> = Some("gfx10-1-generic");
const G103: Option<&str> = Some("gfx10-3-generic");
const G11: Option<&str> = Some("gfx11-generic");
const G12: Option<&str> = Some("gfx12-generic");

/// Every AMDGPU processor of LLVM 22, specific ones first, then generic ones.
pub const PROCESSORS: &[Processor] = &[
    p("gfx600", &["tahiti"], false, false, None),
    p("gfx601", &["pitcairn", "verde"], false, false, None),
    p("gfx602", &["hainan", "oland"], false, false, None),
    p("gfx700", &["kaveri"], false, false, None),
    p("gfx701", &["hawaii"], false, false, None),
    p("gfx702", &[], false, false, None),
    p("gfx703", &["kabini", "mullins"], false, false, None),
    p("gfx704", &["bonaire"], false, false, None),
    p("gfx705", &[], false, false, None),
    p("gfx801", &["carrizo"], true, false, None),
    p("gfx802", &["iceland", "tonga"], false, false, None),
    p(
        "gfx803",
        &["fiji", "polaris10", "polaris11"],
        false,
        false,
        None,
    ),
    p("gfx805", &["tongapro"], false, false, None),
    p("gfx810", &["stoney"], true, false, None),
    p("gfx900", &[], true, false, G9),
    p("gfx902", &[], true, false, G9),
    p("gfx904", &[], true, false, G9),
    p("gfx906", &[], true, true, G9),
    p("gfx908", &[], true, true, None),
    p("gfx909", &[], true, false, G9),
    p("gfx90a", &[], true, true, None),
    p("gfx90c", &[], true, false, G9),
    p("gfx942", &[], true, true, G94),
    p("gfx950", &[], true, true, G94),
    p("gfx1010", &[], true, false, G101),
    p("gfx1011", &[], true, false, G101),
    p("gfx1012", &[], true, false, G101),
    p("gfx1013", &[], true, false, G101),
    p("gfx1030", &[], false, false, G103),
    p("gfx1031", &[], false, false, G103),
    p("gfx1032", &[], false, false, G103),
    p("gfx1033", &[], false, false, G103),
    p("gfx1034", &[], false, false, G103),
    p("gfx1035", &[], false, false, G103),
    p("gfx1036", &[], false, false, G103),
    p("gfx1100", &[], false, false, G11),
    p("gfx1101", &[], false, false, G11),
    p("gfx1102", &[], false, false, G11),
    p("gfx1103", &[], false, false, G11),
    p("gfx1150", &[], false, false, G11),
    p("gfx1151", &[], false, false, G11),
    p("gfx1152", &[], false, false, G11),
    p("gfx1153", &[], false, false, G11),
    p("gfx1200", &[], false, false, G12),
    p("gfx1201", &[], false, false, G12),
    p("gfx1250", &[], false, false, None),
    p("gfx1251", &[], false, false, None),
    p("gfx9-generic", &[], true, false, None),
    p("gfx9-4-generic", &[], true, true, None),
    p("gfx10-1-generic", &[], true, false, None),
    p("gfx10-3-generic", &[], false, false, None),
    p("gfx11-generic", &[], false, false, None),
    p("gfx12-generic", &[], false, false, None),
];

const G117: Option<&str> = Some("gfx11-7-generic");
const G125: Option<&str> = Some("gfx12-5-generic");
const G13: Option<&str> = Some("gfx13-generic");

/// What LLVM's main branch knows that LLVM 22 does not, or knows otherwise
/// (llvm/include/llvm/TargetParser/AMDGPUTargetParser.def of llvm-project
/// main as mirrored at 0049cc39: gfx1154, gfx1170–gfx1172, gfx1310,
/// gfx11-7-generic, gfx12-5-generic, gfx13-generic; gfx1250/gfx1251 gain
/// `FEATURE_SRAMECC`). A target ID takes `xnack` only where the table gives
/// `FEATURE_XNACK_ON_OFF_MODES` (`AMDGPU::TargetID::parse` in
/// llvm/lib/TargetParser/AMDGPUTargetParser.cpp), which gfx1250, gfx1251 and
/// gfx12-5-generic lack ([`XNACK_ALWAYS_ON`]). Each family is the one whose
/// major sub-architecture the processor's belongs to (`AMDGPUMajorFamilies`
/// there), whose generic code `AMDGPU::TargetID::providesFor` lets it run.
pub const UPSTREAM: &[Processor] = &[
    p("gfx1154", &[], false, false, G11),
    p("gfx1170", &[], false, false, G117),
    p("gfx1171", &[], false, false, G117),
    p("gfx1172", &[], false, false, G117),
    p("gfx1250", &[], false, true, G125),
    p("gfx1251", &[], false, true, G125),
    p("gfx1310", &[], false, false, G13),
    p("gfx11-7-generic", &[], false, false, None),
    p("gfx12-5-generic", &[], false, false, None),
    p("gfx13-generic", &[], false, false, None),
];

/// Processors of LLVM's main branch with `FEATURE_XNACK` but not
/// `FEATURE_XNACK_ON_OFF_MODES`: xnack is always on, so their target IDs take
/// no `xnack`, while a code object's `e_flags` may still record it.
pub const XNACK_ALWAYS_ON: &[&str] = &["gfx1250", "gfx1251", "gfx12-5-generic"];

/// Looks a processor up by its canonical name or an alias (exact, as LLVM 22
/// does).
pub fn lookup(name: &str) -> Option<&'static Processor> {
    find(PROCESSORS, name)
}

/// [`lookup`] as LLVM's main branch would: its entries first.
pub fn lookup_upstream(name: &str) -> Option<&'static Processor> {
    find(UPSTREAM, name).or_else(|| lookup(name))
}

fn find(table: &'static [Processor], name: &str) -> Option<&'static Processor> {
    table
        .iter()
        .find(|p| p.name == name || p.aliases.contains(&name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_resolve_to_canonical_names() {
        assert_eq!(lookup("fiji").map(|p| p.name), Some("gfx803"));
        assert_eq!(lookup("stoney").map(|p| p.name), Some("gfx810"));
        assert_eq!(lookup("gfx90a").map(|p| p.name), Some("gfx90a"));
        assert_eq!(lookup("gfx940"), None);
        assert_eq!(lookup("GFX90A"), None);
    }

    #[test]
    fn upstream_names_are_read_but_are_not_llvm_22s() {
        for name in [
            "gfx1154",
            "gfx1170",
            "gfx1310",
            "gfx12-5-generic",
            "gfx13-generic",
        ] {
            assert_eq!(lookup(name), None, "{name}");
            assert_eq!(lookup_upstream(name).map(|p| p.name), Some(name));
        }
        // gfx1250: LLVM 22 gives it no features, main sramecc (its xnack
        // is always on, so not in target IDs).
        assert!(!lookup("gfx1250").unwrap().sramecc);
        assert!(lookup_upstream("gfx1250").unwrap().sramecc);
        assert!(!lookup_upstream("gfx1250").unwrap().xnack);
        assert_eq!(
            lookup_upstream("gfx1172").unwrap().generic,
            Some("gfx11-7-generic")
        );
        assert_eq!(lookup_upstream("fiji").map(|p| p.name), Some("gfx803"));
    }

    #[test]
    fn generic_families_point_at_known_generic_processors() {
        for p in PROCESSORS.iter().chain(UPSTREAM) {
            if let Some(g) = p.generic {
                let g = lookup_upstream(g).expect("generic processor in table");
                assert!(g.generic.is_none());
                // A generic target can only carry features its members have.
                assert!(!g.xnack || p.xnack, "{}", p.name);
                assert!(!g.sramecc || p.sramecc, "{}", p.name);
            }
        }
    }
}
