//! What `clangoffload inspect` prints for arbitrary bytes, in its three
//! modes (text, `--json`, `--objdump`): the tool's own rendering
//! (`clangoffload_cli::render_inspection`), over the C ABI's inspection as
//! the tool calls it, compressed containers decoded under 1 MiB each.
//!
//! Invariants checked:
//! - no panic in any mode, and each mode renders or fails alike;
//! - `--json` is one JSON object and a newline, with the schema number, the
//!   input's size, and `containers`, `notes` as arrays;
//! - the text report is UTF-8 and ends with a newline when not empty;
//! - every mode reports the same damage;
//! - rendering is deterministic (a second rendering gives the same bytes).

use clangoffload_cli::{render_inspection, InspectMode, Rendered, CUDA_DAMAGE};

const MODES: [InspectMode; 3] = [InspectMode::Text, InspectMode::Json, InspectMode::Objdump];

/// The checks, on one input, with compressed bundles decoded whole
/// (`--verify`) and only as far as their entry tables.
pub fn check(data: &[u8]) {
    for verify in [true, false] {
        check_reading(data, verify);
    }
}

fn check_reading(data: &[u8], verify: bool) {
    let rendered: Vec<_> = MODES
        .iter()
        .map(|&mode| render_inspection("input", data, 1 << 20, verify, mode).map_err(|e| e.0))
        .collect();
    let Ok(Rendered {
        text,
        damage,
        no_container,
    }) = &rendered[0]
    else {
        assert!(rendered.iter().all(Result::is_err), "only some modes fail");
        return;
    };
    let Ok(Rendered {
        text: json,
        damage: json_damage,
        ..
    }) = &rendered[1]
    else {
        panic!("--json fails where the text report does not");
    };
    let Ok(Rendered {
        damage: objdump_damage,
        ..
    }) = &rendered[2]
    else {
        panic!("--objdump fails where the text report does not");
    };
    // --objdump is llvm-objdump's view, without CUDA fat binaries: its
    // damage is the rest.
    let not_cuda: Vec<String> = damage
        .iter()
        .filter(|d| !d.starts_with(CUDA_DAMAGE))
        .cloned()
        .collect();
    // A file that holds nothing is an empty view to llvm-objdump.
    assert_eq!(damage, json_damage);
    if !no_container {
        assert_eq!(&not_cuda, objdump_damage);
    }
    let text = std::str::from_utf8(text).expect("the text report is UTF-8");
    assert!(text.is_empty() || text.ends_with('\n'));
    let json = json
        .strip_suffix(b"\n")
        .expect("--json ends with a newline");
    let value: serde_json::Value = serde_json::from_slice(json).expect("--json is JSON");
    assert!(value["schema"].is_u64());
    assert_eq!(value["size"].as_u64(), u64::try_from(data.len()).ok());
    assert!(value["containers"].is_array() && value["notes"].is_array());
    // A file that holds nothing says what it is, in one damage at most.
    assert_eq!(*no_container, value["no_container"].is_string());
    if *no_container {
        assert!(value["containers"].as_array().is_some_and(Vec::is_empty));
        assert!(damage.len() <= 1 && value["cuda_fatbins"].as_array().is_some_and(Vec::is_empty));
    }
    let again =
        render_inspection("input", data, 1 << 20, verify, InspectMode::Json).map_err(|e| e.0);
    assert_eq!(again, rendered[1], "--json is not deterministic");
}
