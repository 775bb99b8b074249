//! LLVM 22's `Triple::normalize`, restricted to what clang-offload-bundler
//! feeds it: a triple of exactly four `-`-free components.
//!
//! The bundler does not write the triple of a `-targets` entry as given: it
//! writes `Triple::normalize(arch-vendor-os-env)` into the entry ID (three
//! fields plus an empty environment when the OS is `amdhsa`, four otherwise).
//! Unbundling looks entries up by that normalised text, so producing
//! byte-identical IDs needs LLVM's exact rules: moving components that sit in
//! the wrong slot, `unknown` for empty ones, and the Windows, Android, SUSE
//! and DXIL rewrites. Aliases are never canonicalised (`amd64` stays
//! `amd64`): normalisation only moves, fills and rewrites components.
//!
//! The name tables below are LLVM 22.1.8's, checked against the installed
//! libLLVM-22 and the real bundler.

use alloc::string::String;
use alloc::vec::Vec;

use super::arch::is_known_arch;
use super::Triple;

/// Vendors `parseVendor` knows (exact match). `unknown`, `none` and `w64` are
/// deliberately absent: LLVM does not know them either.
#[rustfmt::skip]
const VENDOR_NAMES: &[&str] = &[
    "apple", "pc", "scei", "sie", "fsl", "ibm", "img", "mti", "nvidia", "csr", "amd", "mesa",
    "suse", "oe", "intel", "meta",
];

/// OS names `parseOS` matches as prefixes (so `amdhsa3` and `macosx10.15`
/// count). `none`, `mingw32`, `cygwin` and `msys` are not OSes; normalisation
/// handles the last three separately.
#[rustfmt::skip]
const OS_PREFIXES: &[&str] = &[
    "darwin", "dragonfly", "freebsd", "fuchsia", "ios", "kfreebsd", "linux", "lv2", "macos",
    "macosx", "managarm", "netbsd", "openbsd", "solaris", "uefi", "win32", "windows", "zos",
    "haiku", "rtems", "aix", "cuda", "nvcl", "amdhsa", "ps4", "ps5", "elfiamcu", "tvos", "watchos",
    "bridgeos", "driverkit", "xros", "visionos", "mesa3d", "amdpal", "hermit", "hurd", "wasi",
    "wasip1", "wasip2", "wasip3", "emscripten", "shadermodel", "liteos", "serenity", "vulkan",
    "cheriotrtos",
];

/// Environment names `parseEnvironment` matches as prefixes. Where one name
/// is a prefix of another (`gnu`, `gnueabi`, `gnueabihf`), LLVM's order makes
/// the longest one win, so [`parse_env`] picks the longest match.
#[rustfmt::skip]
const ENV_PREFIXES: &[&str] = &[
    "gnu", "gnut64", "gnuabin32", "gnuabi64", "gnueabi", "gnueabit64", "gnueabihf",
    "gnueabihft64", "gnuf32", "gnuf64", "gnusf", "gnux32", "gnu_ilp32", "code16", "eabi",
    "eabihf", "android", "androideabi", "musl", "muslabin32", "muslabi64", "musleabi",
    "musleabihf", "muslf32", "muslsf", "muslx32", "muslwali", "llvm", "msvc", "itanium", "cygnus",
    "coreclr", "simulator", "macabi", "pixel", "vertex", "geometry", "hull", "domain", "compute",
    "library", "raygeneration", "intersection", "anyhit", "closesthit", "miss", "callable", "mesh",
    "amplification", "rootsignature", "opencl", "ohos", "mlibc", "pauthtest", "mtia",
];

/// Object formats `parseFormat` recognises as suffixes, in its order (`xcoff`
/// must be tried before `coff`). Each suffix is also the format's name, which
/// Windows normalisation writes into the environment slot.
#[rustfmt::skip]
const OBJECT_FORMAT_SUFFIXES: &[&str] = &["xcoff", "coff", "elf", "goff", "macho", "wasm", "spirv"];

/// The object format Windows treats as its default (it becomes `msvc`).
const COFF: &str = "coff";

/// `dxilv1.<minor>` for shader model 6.<minor>; the last entry is LLVM 22's
/// latest DXIL version, which `shadermodel6.x` selects.
#[rustfmt::skip]
const DXIL_ARCH_NAMES: &[&str] = &[
    "dxilv1.0", "dxilv1.1", "dxilv1.2", "dxilv1.3", "dxilv1.4", "dxilv1.5", "dxilv1.6", "dxilv1.7",
    "dxilv1.8", "dxilv1.9",
];

/// The number of slots `normalize` sorts components into (arch, vendor, OS,
/// environment).
const SLOTS: usize = 4;

/// Whether the bundler writes this triple in three-field form plus an empty
/// environment: the positional OS (3rd component) parses as AMDHSA (prefix
/// match, so `amdhsa3` counts).
#[must_use]
pub fn is_amdhsa_os(os: &str) -> bool {
    parse_os(os) == Os::AmdHsa
}

/// `Triple::normalize` of `arch-vendor-os-env` in `FOUR_IDENT` form
/// (`three == false`) or `THREE_IDENT` form (`three == true`), as LLVM 22
/// does: component reordering, empty → `unknown`, and the Windows
/// (`win32`/`mingw`/`cygwin`/`msys`), Android, SUSE and DXIL rewrites.
///
/// Components are expected to be `-`-free, as the bundler's split makes them;
/// one containing `-` is kept as one component (LLVM would re-split it).
///
/// # Errors
///
/// `Err(())` where LLVM aborts with "Unsupported Shader Model version": a
/// bare `dxil` arch with shader model 6.N for an N above 9.
#[allow(clippy::result_unit_err)] // The only error is LLVM's one fatal case.
pub fn normalize_triple(components: [&str; 4], three: bool) -> Result<String, ()> {
    let mut comps: Vec<&str> = components.to_vec();
    let mut parsed = Parsed::positional(&comps);
    let mut found = parsed.found();
    for pos in 0..SLOTS {
        if !is_found(found, pos) {
            find_component_for(&mut comps, &mut found, &mut parsed, pos);
        }
    }
    swap_none_into_os_slot(&mut comps, found);
    for c in comps.iter_mut().filter(|c| c.is_empty()) {
        *c = "unknown";
    }
    // Owned text the rewritten environment points into: created before the
    // re-bound, shorter-lived `comps` so that it can borrow it. Stays empty
    // unless the Android rule applies.
    let android_env = android_environment(&comps, &parsed);
    let mut comps: Vec<&str> = comps;
    if !android_env.is_empty() {
        set(&mut comps, 3, &android_env);
    }
    if parsed.vendor == Vendor::Suse && parsed.env == Env::GnuEabi {
        // SUSE spells the hard-float ABI `gnueabi`.
        set(&mut comps, 3, "gnueabihf");
    }
    apply_windows(&mut comps, &parsed);
    apply_dxil(&mut comps, &parsed)?;
    comps.resize(if three { 3 } else { SLOTS }, "unknown");
    Ok(comps.join("-"))
}

/// What normalisation tracks about the components it has parsed. Like LLVM's
/// locals, every field holds the result of the LAST parse attempted for its
/// slot, even a failed one; the special cases after reordering read them.
#[derive(Debug, Clone, Copy)]
struct Parsed {
    arch_known: bool,
    vendor: Vendor,
    os: Os,
    is_cygwin: bool,
    is_mingw: bool,
    env: Env,
    format: Option<&'static str>,
}

/// The vendor distinctions normalisation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vendor {
    Unknown,
    Suse,
    Other,
}

/// The OS distinctions normalisation (and the bundler) need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Os {
    Unknown,
    Win32,
    ShaderModel,
    AmdHsa,
    Other,
}

/// The environment distinctions normalisation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Env {
    Unknown,
    Android,
    GnuEabi,
    Other,
}

impl Parsed {
    /// Each component parsed for the slot it is in. A fifth component would
    /// set the object format; the bundler never has one.
    fn positional(comps: &[&str]) -> Self {
        let at = |i: usize| comps.get(i).copied().unwrap_or("");
        let os = at(2);
        Parsed {
            arch_known: is_known_arch(at(0)),
            vendor: parse_vendor(at(1)),
            os: parse_os(os),
            is_cygwin: is_cygwin(os),
            is_mingw: is_mingw(os),
            env: parse_env(at(3)),
            format: None,
        }
    }

    /// Which slots already hold a component valid for them; those never move.
    /// MinGW/Cygwin do not count here (LLVM only checks them when searching).
    fn found(&self) -> [bool; SLOTS] {
        [
            self.arch_known,
            self.vendor != Vendor::Unknown,
            self.os != Os::Unknown,
            self.env != Env::Unknown,
        ]
    }

    /// Whether `comp` is valid in slot `pos`, recording what it parsed as.
    fn try_slot(&mut self, pos: usize, comp: &str) -> bool {
        match pos {
            0 => {
                self.arch_known = is_known_arch(comp);
                self.arch_known
            }
            1 => {
                self.vendor = parse_vendor(comp);
                self.vendor != Vendor::Unknown
            }
            2 => {
                self.os = parse_os(comp);
                self.is_cygwin = is_cygwin(comp);
                self.is_mingw = is_mingw(comp);
                self.os != Os::Unknown || self.is_cygwin || self.is_mingw
            }
            _ => {
                self.env = parse_env(comp);
                if self.env != Env::Unknown {
                    return true;
                }
                // Only an environment that fails to parse is tried as a format.
                self.format = parse_format(comp);
                self.format.is_some()
            }
        }
    }
}

/// `i < 4 && Found[i]` in LLVM: slots past the fourth are never fixed.
fn is_found(found: [bool; SLOTS], i: usize) -> bool {
    found.get(i).copied().unwrap_or(false)
}

/// The first index after `i` that is not a fixed slot.
fn next_unfixed(found: [bool; SLOTS], i: usize) -> usize {
    let mut j = i.saturating_add(1);
    while is_found(found, j) {
        j = j.saturating_add(1);
    }
    j
}

/// Overwrites component `i` if it exists.
fn set<'a>(comps: &mut [&'a str], i: usize, value: &'a str) {
    if let Some(c) = comps.get_mut(i) {
        *c = value;
    }
}

/// Finds the first non-fixed component valid for slot `pos` and moves it
/// there, as LLVM's normalisation loop does for each slot not yet found.
fn find_component_for(
    comps: &mut Vec<&str>,
    found: &mut [bool; SLOTS],
    parsed: &mut Parsed,
    pos: usize,
) {
    for idx in 0..comps.len() {
        if is_found(*found, idx) {
            continue;
        }
        let Some(&comp) = comps.get(idx) else { break };
        if !parsed.try_slot(pos, comp) {
            continue;
        }
        if pos < idx {
            move_left(comps, *found, pos, idx);
        } else if pos > idx {
            push_right(comps, *found, pos, idx);
        }
        if let Some(f) = found.get_mut(pos) {
            *f = true;
        }
        return;
    }
}

/// Moves component `idx` to slot `pos` (left of it), shifting the non-fixed
/// components in between one step right; they fill the hole left at `idx`,
/// or stop early at an empty component.
fn move_left(comps: &mut [&str], found: [bool; SLOTS], pos: usize, idx: usize) {
    let mut current = match comps.get_mut(idx) {
        Some(c) => core::mem::take(c),
        None => return,
    };
    let mut i = pos;
    while !current.is_empty() {
        while is_found(found, i) {
            i = i.saturating_add(1);
        }
        let Some(slot) = comps.get_mut(i) else { break };
        core::mem::swap(&mut current, slot);
        i = i.saturating_add(1);
    }
}

/// Moves component `idx` right to slot `pos` by inserting empty components
/// before it, one at a time; each insertion shifts non-fixed components right
/// until one lands on an empty component, or appends the last one.
fn push_right(comps: &mut Vec<&str>, found: [bool; SLOTS], pos: usize, mut idx: usize) {
    loop {
        let mut current = "";
        let mut i = idx;
        while let Some(slot) = comps.get_mut(i) {
            core::mem::swap(&mut current, slot);
            if current.is_empty() {
                break;
            }
            i = next_unfixed(found, i);
        }
        if !current.is_empty() {
            comps.push(current);
        }
        idx = next_unfixed(found, idx);
        if idx >= pos {
            return;
        }
    }
}

/// A three-component triple whose middle is `none` (`armv7-none-eabi`) means
/// OS `none`, not vendor `none`: move it to the OS slot.
fn swap_none_into_os_slot(comps: &mut [&str], found: [bool; SLOTS]) {
    if found != [true, false, false, true] {
        return;
    }
    if let [_, vendor, os, ..] = comps {
        if *vendor == "none" && os.is_empty() {
            core::mem::swap(vendor, os);
        }
    }
}

/// `androideabi<version>` becomes `android<version>`; empty if this rule does
/// not apply.
fn android_environment(comps: &[&str], parsed: &Parsed) -> String {
    let mut out = String::new();
    if parsed.env != Env::Android {
        return out;
    }
    if let Some(version) = comps.get(3).and_then(|e| e.strip_prefix("androideabi")) {
        out.push_str("android");
        out.push_str(version);
    }
    out
}

/// Windows spellings: `win32*` becomes `windows` (with an `msvc` or
/// object-format environment when none is given), `mingw*` becomes
/// `windows-gnu`, `cygwin*`/`msys*` become `windows-cygnus`. A non-COFF object
/// format then goes into a fifth component, which the three- and four-field
/// forms drop again.
fn apply_windows(comps: &mut Vec<&str>, parsed: &Parsed) {
    let non_coff_format = parsed.format.filter(|f| *f != COFF);
    if parsed.os == Os::Win32 {
        comps.resize(SLOTS, "");
        set(comps, 2, "windows");
        if parsed.env == Env::Unknown {
            set(comps, 3, non_coff_format.unwrap_or("msvc"));
        }
    } else if parsed.is_mingw {
        comps.resize(SLOTS, "");
        set(comps, 2, "windows");
        set(comps, 3, "gnu");
    } else if parsed.is_cygwin {
        comps.resize(SLOTS, "");
        set(comps, 2, "windows");
        set(comps, 3, "cygnus");
    }
    let windows_with_env = parsed.os == Os::Win32 && parsed.env != Env::Unknown;
    if parsed.is_mingw || parsed.is_cygwin || windows_with_env {
        if let Some(format) = non_coff_format {
            comps.resize(SLOTS.saturating_add(1), "");
            set(comps, SLOTS, format);
        }
    }
}

/// A bare `dxil` arch gets the DXIL version its shader model implies.
fn apply_dxil(comps: &mut Vec<&str>, parsed: &Parsed) -> Result<(), ()> {
    if comps.first() != Some(&"dxil") {
        return Ok(());
    }
    comps.truncate(SLOTS);
    if parsed.os == Os::ShaderModel {
        let os = comps.get(2).copied().unwrap_or("");
        let arch = dxil_arch_for_shader_model(os)?;
        set(comps, 0, arch);
    }
    Ok(())
}

/// LLVM's `getDXILArchNameFromShaderModel`: shader model 6.N is DXIL 1.N,
/// `6.x` the latest, anything else 1.0; a 6.N LLVM does not know is fatal.
fn dxil_arch_for_shader_model(os: &str) -> Result<&'static str, ()> {
    let text = os.strip_prefix("shadermodel").unwrap_or("");
    let oldest = DXIL_ARCH_NAMES.first().copied().unwrap_or("dxil");
    match Version::parse(text) {
        Some(v) if !v.is_empty() => match (v.major, v.minor) {
            (6, Some(minor)) => usize::try_from(minor)
                .ok()
                .and_then(|m| DXIL_ARCH_NAMES.get(m).copied())
                .ok_or(()),
            _ => Ok(oldest),
        },
        // `6.x` does not parse as a version, hence the textual check.
        _ if text == "6.x" => Ok(DXIL_ARCH_NAMES.last().copied().unwrap_or(oldest)),
        _ => Ok(oldest),
    }
}

/// The parts of an LLVM `VersionTuple` `getDXILArchNameFromShaderModel` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Version {
    major: u32,
    minor: Option<u32>,
    subminor: u32,
}

impl Version {
    /// LLVM stores minor and subminor in 31-bit fields.
    const FIELD_MASK: u32 = 0x7fff_ffff;

    /// `VersionTuple::tryParse`: one to four dot-separated decimal numbers,
    /// nothing else. Numbers wrap like C `unsigned` arithmetic, and minor and
    /// subminor are truncated to 31 bits, as LLVM's storage does.
    fn parse(text: &str) -> Option<Self> {
        // Major, minor, subminor and build; a fifth part fails the parse. The
        // build number is parsed but then dropped (`withoutBuild`).
        let mut numbers = [0u32; 4];
        let mut count = 0usize;
        for part in text.split('.') {
            let slot = numbers.get_mut(count)?;
            *slot = parse_unsigned(part)?;
            count = count.saturating_add(1);
        }
        let [major, minor, subminor, _build] = numbers;
        Some(Version {
            major,
            minor: (count >= 2).then_some(minor & Self::FIELD_MASK),
            subminor: subminor & Self::FIELD_MASK,
        })
    }

    /// `VersionTuple::empty`: all parts zero (a failed parse is also empty).
    fn is_empty(&self) -> bool {
        self.major == 0 && self.minor.unwrap_or(0) == 0 && self.subminor == 0
    }
}

/// A non-empty run of ASCII digits as a wrapping 32-bit number.
fn parse_unsigned(digits: &str) -> Option<u32> {
    if digits.is_empty() {
        return None;
    }
    digits.bytes().try_fold(0u32, |acc, b| {
        let digit = char::from(b).to_digit(10)?;
        Some(acc.wrapping_mul(10).wrapping_add(digit))
    })
}

/// `parseVendor`: exact names only.
fn parse_vendor(vendor: &str) -> Vendor {
    if vendor == "suse" {
        Vendor::Suse
    } else if VENDOR_NAMES.contains(&vendor) {
        Vendor::Other
    } else {
        Vendor::Unknown
    }
}

/// `parseOS`: prefix match.
fn parse_os(os: &str) -> Os {
    if !OS_PREFIXES.iter().any(|p| os.starts_with(p)) {
        Os::Unknown
    } else if os.starts_with("win32") || os.starts_with("windows") {
        Os::Win32
    } else if os.starts_with("shadermodel") {
        Os::ShaderModel
    } else if os.starts_with("amdhsa") {
        Os::AmdHsa
    } else {
        Os::Other
    }
}

/// Cygwin and MSYS are not OSes to LLVM but are rewritten to `windows-cygnus`.
fn is_cygwin(os: &str) -> bool {
    os.starts_with("cygwin") || os.starts_with("msys")
}

/// MinGW is not an OS to LLVM but is rewritten to `windows-gnu`.
fn is_mingw(os: &str) -> bool {
    os.starts_with("mingw")
}

/// `parseEnvironment`: the longest matching prefix decides.
fn parse_env(env: &str) -> Env {
    let longest = ENV_PREFIXES
        .iter()
        .filter(|p| env.starts_with(*p))
        .max_by_key(|p| p.len());
    match longest.copied() {
        None => Env::Unknown,
        Some("android" | "androideabi") => Env::Android,
        Some("gnueabi") => Env::GnuEabi,
        Some(_) => Env::Other,
    }
}

/// `parseFormat`: the first matching suffix, as its format name.
fn parse_format(text: &str) -> Option<&'static str> {
    OBJECT_FORMAT_SUFFIXES
        .iter()
        .copied()
        .find(|f| text.ends_with(f))
}

/// What LLVM's `Triple` keeps of each component when it compares triples
/// (its parsed values, not the text): a known arch or vendor as it is, an OS
/// or environment as the longest name it starts with (`windows` as `win32`,
/// `macosx` as `macos`, the same values to LLVM), anything unknown as empty.
/// An object format named at the end of the environment (`elf`, `coff`, ...)
/// counts only when it is not the triple's default one. Not modelled: arch
/// aliases (`amd64` is `x86_64` to LLVM) and ARM sub-arches.
pub fn parsed_identity(triple: Triple<'_>) -> Triple<'_> {
    let longest = |table: &[&'static str], text: &str| {
        table
            .iter()
            .copied()
            .filter(|p| text.starts_with(p))
            .max_by_key(|p| p.len())
            .unwrap_or("")
    };
    let os = match longest(OS_PREFIXES, triple.os) {
        "windows" => "win32",
        "macosx" => "macos",
        os => os,
    };
    let arch = if is_known_arch(triple.arch) {
        triple.arch
    } else {
        ""
    };
    let env = longest(ENV_PREFIXES, triple.env);
    let env = match parse_format(triple.env) {
        Some(format) if format != default_format(arch, os) => {
            if env.is_empty() {
                format
            } else {
                triple.env
            }
        }
        _ => env,
    };
    Triple {
        arch,
        vendor: if VENDOR_NAMES.contains(&triple.vendor) {
            triple.vendor
        } else {
            ""
        },
        os,
        env,
    }
}

/// LLVM's `getDefaultFormat`, as a suffix name, for an arch and an OS as
/// [`parsed_identity`] gives it.
fn default_format(arch: &str, os: &str) -> &'static str {
    let darwin = [
        "darwin",
        "macos",
        "ios",
        "tvos",
        "watchos",
        "xros",
        "visionos",
        "driverkit",
        "bridgeos",
    ];
    if arch.starts_with("spirv") {
        "spirv"
    } else if arch.starts_with("wasm") {
        "wasm"
    } else if matches!(os, "win32" | "uefi") {
        "coff"
    } else if darwin.contains(&os) {
        "macho"
    } else if os == "aix" {
        "xcoff"
    } else if os == "zos" {
        "goff"
    } else {
        "elf"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;

    /// What the bundler does with one `-targets` entry, as far as the triple
    /// goes: split at the first five dashes, reject an unknown arch, then
    /// normalise (THREE_IDENT plus `-` for AMDHSA, FOUR_IDENT otherwise).
    #[derive(Debug, PartialEq, Eq)]
    enum Outcome {
        /// The triple part of the ID, and the 6th piece (the target ID
        /// candidate, possibly empty).
        Id(String, String),
        Rejected,
        Fatal,
    }

    fn bundle(target: &str) -> Outcome {
        let pieces: Vec<&str> = target.splitn(6, '-').collect();
        assert!(
            pieces.len() == 5 || pieces.len() == 6,
            "bad format: {target}"
        );
        let comps = [pieces[1], pieces[2], pieces[3], pieces[4]];
        if !is_known_arch(comps[0]) {
            return Outcome::Rejected;
        }
        let three = is_amdhsa_os(comps[2]);
        match normalize_triple(comps, three) {
            Err(()) => Outcome::Fatal,
            Ok(mut n) => {
                if three {
                    n.push('-');
                }
                Outcome::Id(n, String::from(pieces.get(5).copied().unwrap_or("")))
            }
        }
    }

    /// `expected` is the whole ID the real bundler wrote; its target-ID part
    /// is either empty or the 6th piece of the input, so the triple part is
    /// what remains once that is removed.
    fn check(target: &str, expected: &str) {
        let kind = target.split('-').next().unwrap();
        match bundle(target) {
            Outcome::Id(triple, sixth) => {
                let head = format!("{kind}-{triple}-");
                let ok = expected == head || expected == format!("{head}{sixth}");
                assert!(
                    ok,
                    "{target}: got triple {triple:?}, expected ID {expected:?}"
                );
            }
            other => panic!("{target}: got {other:?}, expected ID {expected:?}"),
        }
    }

    fn check_rejected(target: &str) {
        assert_eq!(bundle(target), Outcome::Rejected, "{target}");
    }

    /// llvm22-facts.md §2.1, first table ("Results for the requested targets").
    const TABLE_2_1: &[(&str, &str)] = &[
        (
            "host-x86_64-unknown-linux-gnu",
            "host-x86_64-unknown-linux-gnu-",
        ),
        (
            "host-x86_64-unknown-linux-gnu-",
            "host-x86_64-unknown-linux-gnu-",
        ),
        ("host-x86_64-pc-linux-", "host-x86_64-pc-linux-unknown-"),
        (
            "host-x86_64-linux-gnu-unknown",
            "host-x86_64-unknown-linux-gnu-",
        ),
        (
            "hip-amdgcn-amd-amdhsa-unknown-gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ),
        (
            "hip-amdgcn-amd-amdhsa--gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ),
        (
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
            "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
        ),
        ("hip-amdgcn-amd-amdhsa-gfx906", "hip-amdgcn-amd-amdhsa--"),
        (
            "openmp-nvptx64-nvidia-cuda-sm_70",
            "openmp-nvptx64-nvidia-cuda-sm_70-",
        ),
        (
            "openmp-nvptx64-nvidia-cuda--sm_70",
            "openmp-nvptx64-nvidia-cuda-unknown-sm_70",
        ),
        (
            "openmp-nvptx64-nvidia-cuda-unknown-sm_90a",
            "openmp-nvptx64-nvidia-cuda-unknown-sm_90a",
        ),
        ("hip-amdgcn-amd-amdhsa--tahiti", "hip-amdgcn-amd-amdhsa--"),
        (
            "hip-amdgcn-amd-amdhsa--gfx9-4-generic",
            "hip-amdgcn-amd-amdhsa--gfx9-4-generic",
        ),
        (
            "hip-spirv64-amd-amdhsa--amdgcnspirv",
            "hip-spirv64-amd-amdhsa--amdgcnspirv",
        ),
        ("openmp-x86_64-pc-linux-gnu-", "openmp-x86_64-pc-linux-gnu-"),
        (
            "openmp-amdgcn-amd-amdhsa--gfx1100",
            "openmp-amdgcn-amd-amdhsa--gfx1100",
        ),
        (
            "hip-amdgcn-amd-amdhsa--gfx908:xnack++",
            "hip-amdgcn-amd-amdhsa--gfx908:xnack++",
        ),
        ("hip-amdgcn-amd-amdhsa--foo", "hip-amdgcn-amd-amdhsa--"),
        (
            "openmp-spirv64-intel-unknown-unknown-",
            "openmp-spirv64-intel-unknown-unknown-",
        ),
        (
            "openmp-spirv64-intel-unknown-unknown",
            "openmp-spirv64-intel-unknown-unknown-",
        ),
        (
            "openmp-spirv64-intel--",
            "openmp-spirv64-intel-unknown-unknown-",
        ),
        (
            "openmp-spirv64-intel-unknown-unknown-foo",
            "openmp-spirv64-intel-unknown-unknown-",
        ),
        (
            "openmp-spirv64-intel-unknown-unknown-bmg_g21",
            "openmp-spirv64-intel-unknown-unknown-bmg_g21",
        ),
        (
            "host-amd64-unknown-linux-gnu",
            "host-amd64-unknown-linux-gnu-",
        ),
        (
            "host-x86_64-UNKNOWN-Linux-GNU",
            "host-x86_64-UNKNOWN-Linux-GNU-",
        ),
    ];

    /// llvm22-facts.md §2.1, rejected rows of both tables.
    const REJECTED: &[&str] = &[
        "host-X86_64-unknown-linux-gnu",
        "host-linux-x86_64-gnu-",
        "host-pc-x86_64-linux-",
        "host----",
        "host-unknown-unknown-linux-gnu",
        "hip-amdhsa-amd-amdgcn--gfx906",
    ];

    /// llvm22-facts.md §2.1, "More verified examples" (rows with `/`
    /// alternatives or `...` abbreviations spelled out).
    const MORE_EXAMPLES: &[(&str, &str)] = &[
        ("host-x86_64-linux-gnu-", "host-x86_64-unknown-linux-gnu-"),
        ("host-x86_64-linux--", "host-x86_64-unknown-linux-unknown-"),
        ("host-x86_64---", "host-x86_64-unknown-unknown-unknown-"),
        (
            "host-x86_64-pc-windows-msvc",
            "host-x86_64-pc-windows-msvc-",
        ),
        ("host-x86_64-pc-win32-", "host-x86_64-pc-windows-msvc-"),
        (
            "host-x86_64-pc-windows-coff",
            "host-x86_64-pc-windows-msvc-",
        ),
        ("host-x86_64-pc-windows-elf", "host-x86_64-pc-windows-elf-"),
        ("host-x86_64-pc-win32-elf", "host-x86_64-pc-windows-elf-"),
        (
            "host-x86_64-pc-windows-macho",
            "host-x86_64-pc-windows-macho-",
        ),
        ("host-x86_64-pc-win32-gnu", "host-x86_64-pc-windows-gnu-"),
        ("host-x86_64-w64-mingw32-", "host-x86_64-w64-windows-gnu-"),
        (
            "host-x86_64-w64-mingw32-elf",
            "host-x86_64-w64-windows-gnu-",
        ),
        ("host-x86_64-pc-cygwin-", "host-x86_64-pc-windows-cygnus-"),
        ("host-x86_64-pc-msys-", "host-x86_64-pc-windows-cygnus-"),
        ("host-armv7-none-eabi-", "host-armv7-unknown-none-eabi-"),
        ("host-arm-none--eabi", "host-arm-unknown-none-eabi-"),
        ("openmp-armv7-none--", "openmp-armv7-none-unknown-unknown-"),
        (
            "host-aarch64-suse-linux-gnueabi",
            "host-aarch64-suse-linux-gnueabihf-",
        ),
        (
            "host-aarch64-unknown-linux-androideabi",
            "host-aarch64-unknown-linux-android-",
        ),
        (
            "host-aarch64-unknown-linux-androideabi21",
            "host-aarch64-unknown-linux-android21-",
        ),
        (
            "host-x86_64-apple-darwin-",
            "host-x86_64-apple-darwin-unknown-",
        ),
        (
            "host-x86_64-unknown-elf-",
            "host-x86_64-unknown-unknown-elf-",
        ),
        ("host-x86_64-elf--", "host-x86_64-unknown-unknown-elf-"),
        (
            "host-x86_64-unknown-linux-elf",
            "host-x86_64-unknown-linux-elf-",
        ),
        (
            "host-x86_64-nvidia-cuda-",
            "host-x86_64-nvidia-cuda-unknown-",
        ),
        (
            "host-dxil-unknown-shadermodel6.3-compute",
            "host-dxilv1.3-unknown-shadermodel6.3-compute-",
        ),
        (
            "host-dxil-unknown-shadermodel6.x-compute",
            "host-dxilv1.9-unknown-shadermodel6.x-compute-",
        ),
        (
            "host-dxil-unknown-shadermodel5.0-",
            "host-dxilv1.0-unknown-shadermodel5.0-unknown-",
        ),
        (
            "host-x86_64-pc-firmware-",
            "host-x86_64-pc-firmware-unknown-",
        ),
        (
            "host-x86_64-unknown-linux-gnu-foo",
            "host-x86_64-unknown-linux-gnu-",
        ),
        (
            "host-x86_64-unknown-linux-gnu-gfx906",
            "host-x86_64-unknown-linux-gnu-gfx906",
        ),
        (
            "host-x86_64-unknown-linux-gnu-sm_70:foo",
            "host-x86_64-unknown-linux-gnu-sm_70:foo",
        ),
        (
            "host-x86_64-unknown-linux-gnu-:",
            "host-x86_64-unknown-linux-gnu-",
        ),
        (
            "hip-amdgcn-amd-amdhsa-gnu-gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ),
        (
            "hip-amdgcn-amd-amdhsa-elf-gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ),
        (
            "hip-amdgcn-amd-amdhsa-amdhsa-gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ),
        (
            "hip-amdgcn-amdhsa-amd--gfx906",
            "hip-amdgcn-amd-amdhsa-unknown-gfx906",
        ),
        (
            "hip-amdgcn-amdhsa---gfx906",
            "hip-amdgcn-unknown-amdhsa-unknown-gfx906",
        ),
        (
            "hip-amdgcn--amdhsa--gfx906",
            "hip-amdgcn-unknown-amdhsa--gfx906",
        ),
        (
            "hip-amdgcn-amd---gfx906",
            "hip-amdgcn-amd-unknown-unknown-gfx906",
        ),
        (
            "hip-amdgcn----gfx906",
            "hip-amdgcn-unknown-unknown-unknown-gfx906",
        ),
        (
            "hip-amdgcn-amd-amdpal--gfx906",
            "hip-amdgcn-amd-amdpal-unknown-gfx906",
        ),
        (
            "hip-amdgcn-amd-AMDHSA--gfx906",
            "hip-amdgcn-amd-AMDHSA-unknown-gfx906",
        ),
        (
            "hip-amdgcn-amd-amdhsa3--gfx906",
            "hip-amdgcn-amd-amdhsa3--gfx906",
        ),
        (
            "hip-amdgcn-amd-amdhsafoo--gfx906",
            "hip-amdgcn-amd-amdhsafoo--gfx906",
        ),
        (
            "hip-amdgcn-AMD-amdhsa--gfx906",
            "hip-amdgcn-AMD-amdhsa--gfx906",
        ),
        ("hip-r600-amd-amdhsa--gfx906", "hip-r600-amd-amdhsa--gfx906"),
        (
            "hip-spirv64-amd-amdhsa-unknown-amdgcnspirv",
            "hip-spirv64-amd-amdhsa--amdgcnspirv",
        ),
        (
            "hip-spirv64-amd-amdhsa--gfx906",
            "hip-spirv64-amd-amdhsa--gfx906",
        ),
        (
            "hip-amdgcn-amd-amdhsa--sm_70",
            "hip-amdgcn-amd-amdhsa--sm_70",
        ),
        (
            "hip-nvptx64-nvidia-cuda--sm_70",
            "hip-nvptx64-nvidia-cuda-unknown-sm_70",
        ),
        (
            "hip-amdgcn-amd-amdhsa--generic",
            "hip-amdgcn-amd-amdhsa--generic",
        ),
        (
            "hip-amdgcn-amd-amdhsa--gfx906:",
            "hip-amdgcn-amd-amdhsa--gfx906:",
        ),
        ("hip-amdgcn-amd-amdhsa--:xnack+", "hip-amdgcn-amd-amdhsa--"),
        (
            "hip-amdgcn-amd-amdhsa--gfx906-extra",
            "hip-amdgcn-amd-amdhsa--",
        ),
        (
            "hip-amdgcn-amd-amdhsa--gfx906:xnack+-extra",
            "hip-amdgcn-amd-amdhsa--gfx906:xnack+-extra",
        ),
        (
            "hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+",
            "hip-amdgcn-amd-amdhsa--gfx906:sramecc-:xnack+",
        ),
        (
            "openmp-nvptx64-nvidia-cuda-gnu-sm_90a",
            "openmp-nvptx64-nvidia-cuda-gnu-sm_90a",
        ),
        (
            "openmp-nvptx64-nvidia--cuda-sm_70",
            "openmp-nvptx64-nvidia-cuda-unknown-sm_70",
        ),
        (
            "openmp-nvptx64-cuda-nvidia--sm_70",
            "openmp-nvptx64-nvidia-cuda-unknown-sm_70",
        ),
        ("openmp-x86_64-pc-none-gnu-", "openmp-x86_64-pc-none-gnu-"),
        (
            "openmp-x86_64-none-linux-gnu-",
            "openmp-x86_64-none-linux-gnu-",
        ),
        (
            "openmp-x86_64-none--eabi-",
            "openmp-x86_64-unknown-none-eabi-",
        ),
        (
            "openmp-spir64-unknown-unknown--",
            "openmp-spir64-unknown-unknown-unknown-",
        ),
    ];

    /// Extra cases checked against the real clang-offload-bundler 22.1.8
    /// (bundling a 1-byte file and reading the IDs from the header).
    const OWN_EXAMPLES: &[(&str, &str)] = &[
        ("host-x86_64-gnu-linux-pc", "host-x86_64-pc-linux-gnu-"),
        ("host-x86_64-linux-pc-gnu", "host-x86_64-pc-linux-gnu-"),
        ("host-x86_64-gnu-pc-linux", "host-x86_64-pc-linux-gnu-"),
        ("host-x86_64-windows-pc-", "host-x86_64-pc-windows-msvc-"),
        (
            "host-x86_64-mingw32-w64-",
            "host-x86_64-unknown-windows-gnu-",
        ),
        (
            "host-aarch64-androideabi-linux-",
            "host-aarch64-unknown-linux-android-",
        ),
        (
            "host-x86_64-suse-gnueabi-linux",
            "host-x86_64-suse-linux-gnueabihf-",
        ),
        (
            "hip-amdgcn-gnu-amdhsa--gfx906",
            "hip-amdgcn-unknown-amdhsa--gfx906",
        ),
        (
            "hip-amdgcn-amdhsa-amdhsa--gfx906",
            "hip-amdgcn-amdhsa-amdhsa--gfx906",
        ),
        (
            "hip-amdgcn-amdhsa-gnu-amd-gfx906",
            "hip-amdgcn-amd-amdhsa-gnu-gfx906",
        ),
        (
            "host-dxil-shadermodel6.5-pixel-",
            "host-dxilv1.5-unknown-shadermodel6.5-pixel-",
        ),
        (
            "host-x86_64-pc-windows-xcoff",
            "host-x86_64-pc-windows-xcoff-",
        ),
        (
            "host-thumbv7m-none--eabi",
            "host-thumbv7m-unknown-none-eabi-",
        ),
        ("host-armv7-none-linux-eabi", "host-armv7-none-linux-eabi-"),
        ("host-x86_64-elf-linux-", "host-x86_64-unknown-linux-elf-"),
        (
            "openmp-x86_64-cuda-linux-gnu",
            "openmp-x86_64-cuda-linux-gnu-",
        ),
        (
            "host-x86_64-pc-cygwin-elf",
            "host-x86_64-pc-windows-cygnus-",
        ),
        (
            "host-kalimba3-unknown-unknown-",
            "host-kalimba3-unknown-unknown-unknown-",
        ),
        ("host-armx-pc-linux-gnu", "host-armx-pc-linux-gnu-"),
        (
            "host-x86_64-pc-win32-androideabi21",
            "host-x86_64-pc-windows-android21-",
        ),
        (
            "host-x86_64-pc-mingw32-androideabi",
            "host-x86_64-pc-windows-gnu-",
        ),
        (
            "host-dxil-pc-shadermodel6.x-amplification",
            "host-dxilv1.9-pc-shadermodel6.x-amplification-",
        ),
        (
            "hip-amdgcn-amd-amdhsa-gnueabi-gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ),
        (
            "host-x86_64-msvc-windows-",
            "host-x86_64-unknown-windows-msvc-",
        ),
        (
            "host-x86_64-apple-macosx10.15-",
            "host-x86_64-apple-macosx10.15-unknown-",
        ),
        (
            "host-x86_64-linux-suse-gnueabi",
            "host-x86_64-suse-linux-gnueabihf-",
        ),
        ("host-x86_64-gnu--linux", "host-x86_64-unknown-linux-gnu-"),
        (
            "openmp-nvptx64-sm_70-nvidia-cuda",
            "openmp-nvptx64-nvidia-cuda-sm_70-",
        ),
        (
            "host-aarch64-linux-android-suse",
            "host-aarch64-suse-linux-android-",
        ),
        (
            "host-x86_64-coff-pc-windows",
            "host-x86_64-pc-windows-msvc-",
        ),
        (
            "host-x86_64-pc-windowsfoo-gnu",
            "host-x86_64-pc-windows-gnu-",
        ),
        (
            "host-x86_64-pc-msys2-macho",
            "host-x86_64-pc-windows-cygnus-",
        ),
        (
            "host-dxil-unknown-shadermodel6.1.2-",
            "host-dxilv1.1-unknown-shadermodel6.1.2-unknown-",
        ),
        (
            "host-dxil-unknown-shadermodel6-",
            "host-dxilv1.0-unknown-shadermodel6-unknown-",
        ),
        (
            "host-dxilv1.2-unknown-shadermodel6.3-compute",
            "host-dxilv1.2-unknown-shadermodel6.3-compute-",
        ),
        ("host-arm64eb-apple-ios-", "host-arm64eb-apple-ios-unknown-"),
        (
            "host-x86_64-none-windows-",
            "host-x86_64-none-windows-msvc-",
        ),
        (
            "hip-amdgcn-amd-amdhsa-androideabi-gfx906",
            "hip-amdgcn-amd-amdhsa--gfx906",
        ),
    ];

    #[test]
    fn table_2_1() {
        for (target, id) in TABLE_2_1 {
            check(target, id);
        }
    }

    #[test]
    fn more_verified_examples() {
        for (target, id) in MORE_EXAMPLES {
            check(target, id);
        }
    }

    #[test]
    fn own_examples() {
        for (target, id) in OWN_EXAMPLES {
            check(target, id);
        }
    }

    #[test]
    fn rejected_targets() {
        for target in REJECTED {
            check_rejected(target);
        }
    }

    #[test]
    fn unsupported_shader_model_is_fatal() {
        assert_eq!(
            bundle("host-dxil-unknown-shadermodel6.10-compute"),
            Outcome::Fatal
        );
        assert_eq!(
            normalize_triple(["dxil", "", "shadermodel6.10", ""], false),
            Err(())
        );
    }

    #[test]
    fn amdhsa_os_is_a_prefix_match() {
        assert!(is_amdhsa_os("amdhsa"));
        assert!(is_amdhsa_os("amdhsa3"));
        assert!(is_amdhsa_os("amdhsafoo"));
        assert!(!is_amdhsa_os("AMDHSA"));
        assert!(!is_amdhsa_os("amd"));
        assert!(!is_amdhsa_os(""));
        assert!(!is_amdhsa_os("amdpal"));
    }

    #[test]
    fn every_table_arch_is_known() {
        for name in super::super::arch::ARCH_NAMES {
            assert!(is_known_arch(name), "{name}");
        }
    }

    #[test]
    fn arch_names() {
        // §4 of llvm22-facts.md: accepted through the prefix and ARM fallbacks.
        let known = [
            "kalimba",
            "kalimba3",
            "kalimbax",
            "armv7",
            "armv7a",
            "armv7m",
            "armv7s",
            "armv7k",
            "armv7ve",
            "armv7l",
            "armv6l",
            "armv5te",
            "armv5tej",
            "armv4t",
            "armv2",
            "armv3",
            "armv",
            "armv9999",
            "armv1x",
            "armv8a",
            "armv8.1a",
            "armv9a",
            "armv9.6a",
            "armv9.7a",
            "armv8r",
            "armv8m.base",
            "armv8m.main",
            "armv8.1m.main",
            "armv6m",
            "armebv7",
            "armv7eb",
            "armebv6m",
            "thumbv7m",
            "thumbv7em",
            "thumbv6m",
            "thumbv4t",
            "thumbv4",
            "thumbebv7m",
            "aarch64v8",
            "arm64v8",
            "arm64_32x",
            "arm64ex",
            "aarch64_32v8",
            "aarch64_lfi",
            "aarch64_bev8",
            "aarch64_bex",
            "arm64_32eb",
            "armx",
            "arm64eb",
        ];
        for name in known {
            assert!(is_known_arch(name), "{name} should be known");
        }
        let unknown = [
            "x86",
            "x86-64",
            "i086",
            "amdgpu",
            "amdgpu9",
            "x86_64_lfi",
            "tcele64",
            "spirv1.0",
            "spirv1.4",
            "spirv64v1.7",
            "dxilv1.10",
            "bpfx",
            "loongarch",
            "e2k",
            "sparcv8",
            "X86_64",
            "AMDGCN",
            "thumbv2",
            "thumbv3",
            "armvx",
            "arm_x",
            "arm32",
            "armxscale",
            "iwmmxt",
            "armebv7eb",
            "aarch64eb",
            "aarch64_lfix",
            "",
            "unknown",
            "linux",
            "amdhsa",
        ];
        for name in unknown {
            assert!(!is_known_arch(name), "{name} should be unknown");
        }
    }

    #[test]
    fn shader_model_versions() {
        let dxil = |os: &str| normalize_triple(["dxil", "unknown", os, "compute"], false);
        assert_eq!(
            dxil("shadermodel6.0").unwrap(),
            "dxilv1.0-unknown-shadermodel6.0-compute"
        );
        assert_eq!(
            dxil("shadermodel6.9").unwrap(),
            "dxilv1.9-unknown-shadermodel6.9-compute"
        );
        assert_eq!(
            dxil("shadermodel6").unwrap(),
            "dxilv1.0-unknown-shadermodel6-compute"
        );
        assert_eq!(
            dxil("shadermodel6.1.2").unwrap(),
            "dxilv1.1-unknown-shadermodel6.1.2-compute"
        );
        assert_eq!(
            dxil("shadermodel6.1.2.3.4").unwrap(),
            "dxilv1.0-unknown-shadermodel6.1.2.3.4-compute"
        );
        assert_eq!(
            dxil("shadermodel6.xy").unwrap(),
            "dxilv1.0-unknown-shadermodel6.xy-compute"
        );
        // 2^31 truncates to minor 0 in LLVM's 31-bit field.
        assert_eq!(
            dxil("shadermodel6.2147483648").unwrap(),
            "dxilv1.0-unknown-shadermodel6.2147483648-compute"
        );
        // 2^32 + 6 wraps to major 6.
        assert_eq!(
            dxil("shadermodel4294967302.2").unwrap(),
            "dxilv1.2-unknown-shadermodel4294967302.2-compute"
        );
        assert_eq!(dxil("shadermodel6.11"), Err(()));
        // Only a bare `dxil` is versioned.
        assert_eq!(
            normalize_triple(["dxilv1.2", "unknown", "shadermodel6.3", "compute"], false).unwrap(),
            "dxilv1.2-unknown-shadermodel6.3-compute"
        );
    }

    #[test]
    fn three_ident_drops_the_environment() {
        assert_eq!(
            normalize_triple(["amdgcn", "amd", "amdhsa", "gnu"], true).unwrap(),
            "amdgcn-amd-amdhsa"
        );
        assert_eq!(
            normalize_triple(["amdgcn", "", "amdhsa", ""], true).unwrap(),
            "amdgcn-unknown-amdhsa"
        );
    }
}
