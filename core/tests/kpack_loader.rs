//! Resolution against rocm-kpack's own runtime loader: every case of
//! tests/fixtures/kpack/loader/results.txt (what librocm_kpack, built from
//! its source, loaded for each HIPK record of the split hosts, on seven
//! devices and in six environments; record.sh) resolved by
//! `clangoffload::kpack` on the same install tree: the same code object
//! (size and hash) or the same error code, in every case.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

use std::path::{Path, PathBuf};

use clangoffload::compressed::truncated_md5;
use clangoffload::kpack::{candidates, records, resolve, Archive, Environment, Loader, SearchPath};
use clangoffload::object::ObjectFile;
use clangoffload::DecompressOptions;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/kpack")
}

/// The install tree the loader ran on: the zstd split's hosts under
/// `pkg/stage`, its archives in `pkg/stage/.kpack` under their real names
/// (":" where the fixtures have "_").
fn install(root: &Path) -> PathBuf {
    let stage = root.join("pkg/stage");
    for dir in ["lib", "bin", ".kpack"] {
        std::fs::create_dir_all(stage.join(dir)).unwrap();
        for file in std::fs::read_dir(fixtures().join("zstd").join(dir)).unwrap() {
            let file = file.unwrap();
            let name = file
                .file_name()
                .to_string_lossy()
                .replace("gfx90a_xnack", "gfx90a:xnack");
            std::fs::copy(file.path(), stage.join(dir).join(name)).unwrap();
        }
    }
    stage
}

/// `weakly_canonical(dirname(host) / rel)`: the host's directory with its
/// symlinks resolved, then `..` applied to the words of `rel`.
fn place(host: &Path, rel: &[u8]) -> Vec<u8> {
    let dir = std::fs::canonicalize(host.parent().unwrap()).unwrap();
    clangoffload::kpack::place(dir.to_str().unwrap().as_bytes(), rel)
}

#[test]
fn resolution_agrees_with_rocm_kpacks_loader_in_every_recorded_case() {
    let dir = tempfile_dir();
    let stage = install(&dir);
    let results = std::fs::read_to_string(fixtures().join("loader/results.txt")).unwrap();
    let options = DecompressOptions::default();
    let mut cases = 0;
    for line in results.lines() {
        let f: Vec<&str> = line.split('|').collect();
        let (host, k, env, devices, want) = (f[0], f[1], f[2], f[3], f[4]);
        let host = stage.join(host);
        let data = std::fs::read(&host).unwrap();
        let file = ObjectFile::parse(&data).unwrap();
        let record = records(&file)
            .into_iter()
            .find(|r| r.co_index.to_string() == k)
            .unwrap();
        let (_, marker) = record.marker.clone().unwrap();
        let paths: Vec<SearchPath<'_>> = marker.search_paths().collect();
        let value = env
            .split_once('=')
            .map(|(name, v)| (name, v.replace("@ROOT@", stage.to_str().unwrap())));
        let get = |name: &str| {
            value
                .as_ref()
                .filter(|(n, _)| *n == name)
                .map(|(_, v)| v.as_bytes())
        };
        let environment = Environment::from_values(
            get("ROCM_KPACK_DISABLE"),
            get("ROCM_KPACK_PATH"),
            get("ROCM_KPACK_PATH_PREFIX"),
        );
        let arches: Vec<Vec<u8>> = devices.split(',').map(|d| d.as_bytes().to_vec()).collect();
        // The candidates that exist, each once (by canonical path), read.
        let mut seen = Vec::new();
        let mut opened = Vec::new();
        for candidate in candidates(&environment, &paths, &arches, &|rel| place(&host, rel)) {
            let path = PathBuf::from(String::from_utf8(candidate).unwrap());
            let Ok(canonical) = std::fs::canonicalize(&path) else {
                continue;
            };
            if !canonical.is_file() || seen.contains(&canonical) {
                continue;
            }
            seen.push(canonical);
            opened.push(std::fs::read(&path).unwrap());
        }
        let archives: Vec<Archive<'_>> = opened
            .iter()
            .filter_map(|d| Archive::parse(d).ok())
            .collect();
        let key = clangoffload::kpack::binary_key(marker.kernel_name, record.co_index);
        let got = match resolve(
            &environment,
            &key,
            &arches,
            &archives,
            Loader::FirstCandidate,
        ) {
            Ok(found) => {
                let bytes = archives[found.archive]
                    .contents(&found.entry, &options)
                    .unwrap();
                format!("ok {} {:016x}", bytes.len(), truncated_md5(&bytes))
            }
            Err(e) => format!("error {}", e.code()),
        };
        assert_eq!(got, want, "{line}");
        cases += 1;
    }
    assert_eq!(cases, 378);
}

/// A fresh directory under the target's temporary directory.
fn tempfile_dir() -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("clangoffload-kpack-loader-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
