//! `include/clangoffload.h` must be what cbindgen makes of the sources.
//! Regenerate with `CLANGOFFLOAD_BLESS=1 cargo test -p clangoffload-capi --test header`.

use std::path::Path;

fn generate() -> String {
    let crate_dir = env!("CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(Path::new(crate_dir).join("cbindgen.toml"))
        .expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("header is UTF-8")
}

#[test]
fn committed_header_is_current() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../include/clangoffload.h");
    let fresh = generate();
    if std::env::var_os("CLANGOFFLOAD_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/clangoffload.h is stale: run CLANGOFFLOAD_BLESS=1 cargo test -p clangoffload-capi --test header"
    );
}
