//! `-type=o` with a host ELF or COFF object: the bundler drop-in against the objects
//! clang-offload-bundler 22 made (tests/fixtures/object, tests/fixtures/coff), and live against
//! LLVM 22 when it is installed.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use common::*;

const TARGETS: &str =
    "host-x86_64-unknown-linux-gnu,openmp-x86_64-pc-linux-gnu,hip-amdgcn-amd-amdhsa--gfx906";
const HOSTS: [&str; 5] = ["x86_64.o", "i386.o", "groups.o", "amdgcn.o", "shared.so"];

fn object(name: &str) -> String {
    fixtures().join("object").join(name).display().to_string()
}

fn ok(r: &std::process::Output) {
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
}

/// Bundles host object `host` of fixture folder `dir` with its two payloads
/// for `targets`; the output must be clang-offload-bundler 22's
/// `bundled-<host>` of that folder.
fn bundles_as_llvm_22(sb: &Sandbox, dir: &str, targets: &str, host: &str) {
    let path = |name: &str| fixtures().join(dir).join(name).display().to_string();
    let out = sb.path(&format!("bundled-{host}"));
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            format!("-targets={targets}"),
            format!("-input={}", path(host)),
            format!("-input={}", path("openmp.payload")),
            format!("-input={}", path("hip.payload")),
            format!("-output={}", out.display()),
        ],
    );
    ok(&r);
    let ours = std::fs::read(&out).unwrap();
    let llvm = std::fs::read(path(&format!("bundled-{host}"))).unwrap();
    assert!(
        ours == llvm,
        "{host}: differs from clang-offload-bundler 22's"
    );
}

#[test]
fn bundling_a_host_object_is_byte_identical_to_llvm_22() {
    let sb = Sandbox::new();
    for host in HOSTS {
        bundles_as_llvm_22(&sb, "object", TARGETS, host);
    }
}

/// Lists and unbundles LLVM 22's `bundled-<host>` of fixture folder `dir`:
/// the list must be LLVM's, the payloads the inputs and the host object
/// LLVM's `host-<host>`. `ids` are the hip, host and openmp targets, asked
/// for in that order (another than the sections', as the lit tests do).
fn lists_and_unbundles_as_llvm_22(sb: &Sandbox, dir: &str, host: &str, ids: [&str; 3]) {
    let path = |name: &str| fixtures().join(dir).join(name).display().to_string();
    let bundled = path(&format!("bundled-{host}"));
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-list".into(),
            format!("-input={bundled}"),
        ],
    );
    ok(&r);
    let listed = std::fs::read(path(&format!("bundled-{host}.list"))).unwrap();
    assert_eq!(r.stdout, listed, "{host}: -list (section order)");
    let outs = ["hip", "host", "openmp"].map(|n| sb.path(&format!("{n}-{host}")));
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-unbundle".into(),
            format!("-targets={}", ids.join(",")),
            format!("-input={bundled}"),
            format!("-output={}", outs[0].display()),
            format!("-output={}", outs[1].display()),
            format!("-output={}", outs[2].display()),
        ],
    );
    ok(&r);
    let read = |p: &std::path::Path| std::fs::read(p).unwrap();
    assert_eq!(read(&outs[0]), read(path("hip.payload").as_ref()));
    assert_eq!(read(&outs[2]), read(path("openmp.payload").as_ref()));
    assert!(
        read(&outs[1]) == read(path(&format!("host-{host}")).as_ref()),
        "{host}: host object differs from LLVM 22's"
    );
}

#[test]
fn list_and_unbundle_read_llvm_22_object_bundles() {
    let sb = Sandbox::new();
    let ids = [
        "hip-amdgcn-amd-amdhsa--gfx906",
        "host-x86_64-unknown-linux-gnu",
        "openmp-x86_64-pc-linux-gnu",
    ];
    for host in HOSTS {
        lists_and_unbundles_as_llvm_22(&sb, "object", host, ids);
    }
}

#[test]
fn an_object_without_bundle_sections_is_the_hosts_own_file() {
    let sb = Sandbox::new();
    let plain = object("x86_64.o");
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-list".into(),
            format!("-input={plain}"),
        ],
    );
    ok(&r);
    assert!(r.stdout.is_empty());
    let (host, dev) = (sb.path("host.o"), sb.path("dev"));
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-unbundle".into(),
            "-allow-missing-bundles".into(),
            "-targets=host-x86_64-unknown-linux-gnu,openmp-x86_64-pc-linux-gnu".into(),
            format!("-input={plain}"),
            format!("-output={}", host.display()),
            format!("-output={}", dev.display()),
        ],
    );
    ok(&r);
    assert_eq!(
        std::fs::read(&host).unwrap(),
        std::fs::read(&plain).unwrap()
    );
    assert!(std::fs::read(&dev).unwrap().is_empty());
}

#[test]
fn hip_only_with_an_elf_first_input_writes_a_binary_bundle() {
    // LLVM 22 crashes here (no host input to carry sections).
    let sb = Sandbox::new();
    let out = sb.path("hip.bundle");
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-targets=hip-amdgcn-amd-amdhsa--gfx906,hip-amdgcn-amd-amdhsa--gfx900".into(),
            format!("-input={}", object("amdgcn.o")),
            format!("-input={}", object("hip.payload")),
            format!("-output={}", out.display()),
        ],
    );
    ok(&r);
    let bundle = std::fs::read(&out).unwrap();
    assert!(bundle.starts_with(b"__CLANG_OFFLOAD_BUNDLE__"));
    if let Some(llvm) = llvm22() {
        let r = run(
            &llvm,
            &[
                "-type=o".to_owned(),
                "-list".into(),
                format!("-input={}", out.display()),
            ],
        );
        ok(&r);
        assert_eq!(
            sorted_lines(&r.stdout),
            [
                "hip-amdgcn-amd-amdhsa--gfx900",
                "hip-amdgcn-amd-amdhsa--gfx906"
            ]
        );
    }
}

#[test]
fn a_damaged_object_is_a_located_error() {
    let sb = Sandbox::new();
    let mut data = std::fs::read(object("bundled-x86_64.o")).unwrap();
    let shoff = usize::try_from(u64::from_le_bytes(data[40..48].try_into().unwrap())).unwrap();
    // The last section (hip) gets an offset past the end.
    let count = usize::from(u16::from_le_bytes(data[60..62].try_into().unwrap()));
    let at = shoff + 64 * (count - 1) + 24;
    data[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
    let bad = sb.path("bad.o");
    std::fs::write(&bad, &data).unwrap();
    // Listed by section name, as LLVM 22 lists it.
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-list".into(),
            format!("-input={}", bad.display()),
        ],
    );
    assert_eq!(r.status.code(), Some(0));
    assert_eq!(sorted_lines(&r.stdout).len(), 3);
    // Unbundling the damaged entry is a located error.
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-unbundle".into(),
            "-targets=hip-amdgcn-amd-amdhsa--gfx906".into(),
            format!("-input={}", bad.display()),
            format!("-output={}", sb.path("out").display()),
        ],
    );
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert!(
        stderr.contains("malformed object") && stderr.contains("section contents"),
        "{stderr}"
    );
}

#[test]
fn llvm_22_reads_what_we_bundle_and_links_the_host_object() {
    let Some(llvm) = llvm22() else { return };
    let sb = Sandbox::new();
    let out = sb.path("ours.o");
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            format!("-targets={TARGETS}"),
            format!("-input={}", object("x86_64.o")),
            format!("-input={}", object("openmp.payload")),
            format!("-input={}", object("hip.payload")),
            format!("-output={}", out.display()),
        ],
    );
    ok(&r);
    let host = sb.path("host.o");
    let dev = sb.path("dev");
    let r = run(
        &llvm,
        &[
            "-type=o".to_owned(),
            "-unbundle".into(),
            "-targets=host-x86_64-unknown-linux-gnu,openmp-x86_64-pc-linux-gnu".into(),
            format!("-input={}", out.display()),
            format!("-output={}", host.display()),
            format!("-output={}", dev.display()),
        ],
    );
    ok(&r);
    assert_eq!(
        std::fs::read(&host).unwrap(),
        std::fs::read(object("x86_64.o")).unwrap()
    );
    // The bundled object links: the bundle sections are SHF_EXCLUDE.
    let clang = std::path::Path::new("/usr/lib/llvm-22/bin/clang");
    let main_c = sb.path("main.c");
    std::fs::write(
        &main_c,
        "int add(int);\nint main(void) { return add(-3); }\n",
    )
    .unwrap();
    let exe = sb.path("a.out");
    let r = run(
        clang,
        &[
            main_c.display().to_string(),
            out.display().to_string(),
            "-o".into(),
            exe.display().to_string(),
        ],
    );
    ok(&r);
    let status = std::process::Command::new(&exe).status().unwrap();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn clangoffload_list_reads_object_bundles() {
    let ours = std::path::Path::new(env!("CARGO_BIN_EXE_clangoffload"));
    let r = run(ours, &["list".to_owned(), object("bundled-groups.o")]);
    assert!(r.status.success());
    assert_eq!(
        r.stdout,
        std::fs::read(object("bundled-groups.o.list")).unwrap()
    );
}

const COFF_TARGETS: &str =
    "host-x86_64-pc-windows-msvc,openmp-x86_64-pc-windows-msvc,hip-amdgcn-amd-amdhsa--gfx906";
const COFF_HOSTS: [&str; 3] = ["hip.o", "hip-rdc-new-driver.o", "stubs.obj"];

fn coff(name: &str) -> String {
    fixtures().join("coff").join(name).display().to_string()
}

/// COFF host objects (clang 22 for `x86_64-pc-windows-msvc`): bundled,
/// listed and unbundled byte for byte as clang-offload-bundler 22 does
/// (through llvm-objcopy), without llvm-objcopy.
#[test]
fn coff_hosts_bundle_list_and_unbundle_as_llvm_22() {
    let sb = Sandbox::new();
    for host in COFF_HOSTS {
        bundles_as_llvm_22(&sb, "coff", COFF_TARGETS, host);
        let ids = [
            "hip-amdgcn-amd-amdhsa--gfx906",
            "host-x86_64-pc-windows-msvc",
            "openmp-x86_64-pc-windows-msvc",
        ];
        lists_and_unbundles_as_llvm_22(&sb, "coff", host, ids);
    }
    // What clang's driver bundled for -fgpu-rdc.
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-list".into(),
            format!("-input={}", coff("hip-rdc.o")),
        ],
    );
    ok(&r);
    assert_eq!(r.stdout, std::fs::read(coff("hip-rdc.o.list")).unwrap());
}

/// A PE image as the host: LLVM 22 adds sections to the image; we write
/// objects only, and must not write anything else in its place: a clear
/// error and no output.
#[test]
fn pe_image_hosts_are_refused_not_rewritten() {
    let sb = Sandbox::new();
    let out = sb.path("out.dll");
    let r = run(
        &sb.ours(),
        &[
            "-type=o".to_owned(),
            "-targets=host-x86_64-pc-windows-msvc,hip-amdgcn-amd-amdhsa--gfx906".to_owned(),
            format!("-input={}", coff("hip.dll")),
            format!("-input={}", coff("hip.payload")),
            format!("-output={}", out.display()),
        ],
    );
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("PE images"), "{stderr}");
    assert!(!out.exists(), "nothing is written in another format");
}

/// `list`, `inspect` and `extract` find the bundle in a COFF object's
/// `.hip_fatbin` and in a DLL's and an EXE's `.hip_fat` (where LLVM 22's
/// tools read nothing); `inspect --objdump` prints what llvm-objdump 22
/// prints for `.llvm.offloading`.
#[test]
fn windows_hosts_are_listed_inspected_and_extracted() {
    let ours = std::path::Path::new(env!("CARGO_BIN_EXE_clangoffload"));
    let ids = "host-x86_64-unknown-linux-gnu-\nhipv4-amdgcn-amd-amdhsa--gfx906\n";
    for name in ["hip.o", "hip-compress.o", "hip.dll", "hip.exe"] {
        let r = run(ours, &["list".to_owned(), coff(name)]);
        ok(&r);
        assert_eq!(String::from_utf8_lossy(&r.stdout), ids, "{name}");
        let r = run(ours, &["inspect".to_owned(), coff(name)]);
        ok(&r);
        let report = String::from_utf8_lossy(&r.stdout);
        assert!(report.contains("wrapper 0: HIPF"), "{name}: {report}");
        assert!(!report.contains("error"), "{name}: {report}");
        let sb = Sandbox::new();
        let dir = sb.path("out");
        std::fs::create_dir_all(&dir).unwrap();
        let r = run(
            ours,
            &[
                "extract".to_owned(),
                coff(name),
                "-o".into(),
                dir.display().to_string(),
            ],
        );
        ok(&r);
        let code_object = dir.join(format!("{name}.1.hipv4-amdgcn-amd-amdhsa--gfx906"));
        assert!(
            std::fs::read(&code_object).unwrap().starts_with(b"\x7fELF"),
            "{name}"
        );
    }
    let r = run(
        ours,
        &[
            "inspect".to_owned(),
            coff("hip-rdc-new-driver.o"),
            "--objdump".into(),
        ],
    );
    ok(&r);
    let path = coff("hip-rdc-new-driver.o");
    let expected = String::from_utf8(std::fs::read(coff("hip-rdc-new-driver.o.objdump")).unwrap())
        .unwrap()
        .replace("hip-rdc-new-driver.o:", &format!("{path}:"));
    assert_eq!(String::from_utf8_lossy(&r.stdout), expected);
}

/// The real clang 22 pipelines for `x86_64-pc-windows-msvc` (HIP RDC, non-RDC
/// and compressed), once with LLVM's clang-offload-bundler and once with
/// ours found first (`-B`): the objects are identical.
#[test]
fn clang_22_windows_pipelines_give_identical_objects_with_our_bundler() {
    let clang = std::path::Path::new("/usr/lib/llvm-22/bin/clang");
    if !clang.exists() {
        eprintln!("NOTICE: clang-22 not installed; Windows driver pipelines skipped");
        return;
    }
    let sb = Sandbox::new();
    let tools = sb.path("ourbin");
    std::fs::create_dir_all(&tools).unwrap();
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_clangoffload"),
        tools.join("clang-offload-bundler"),
    )
    .unwrap();
    let source = fixtures().join("offload/src/k.hip");
    for (name, extra) in [
        ("rdc", &["-fgpu-rdc"][..]),
        ("plain", &[][..]),
        ("compress", &["--offload-compress"][..]),
    ] {
        let compile = |out: &str, ours: bool| {
            let mut command = std::process::Command::new(clang);
            if ours {
                command.arg("-B").arg(&tools);
            }
            let status = command
                .args(["-target", "x86_64-pc-windows-msvc", "-x", "hip"])
                .args(["--offload-arch=gfx906", "--offload-arch=gfx90a"])
                .args(["-nogpulib", "-nogpuinc", "-O1", "-cuid=fixture"])
                .arg("-mno-incremental-linker-compatible")
                .args(extra)
                .arg("-c")
                .arg(&source)
                .arg("-o")
                .arg(sb.path(out))
                .status()
                .unwrap();
            assert!(status.success(), "{name}");
            std::fs::read(sb.path(out)).unwrap()
        };
        let llvm = compile(&format!("{name}-llvm.o"), false);
        let ours = compile(&format!("{name}-ours.o"), true);
        assert!(llvm == ours, "{name}: the objects differ");
    }
}

/// A device archive of COFF members (an RDC object and a bundled object):
/// `-type=a -unbundle` writes what LLVM 22 writes, the host archive with the
/// symbol index of the COFF host objects.
#[test]
fn archives_of_coff_objects_unbundle_as_llvm_22() {
    let sb = Sandbox::new();
    for (target, expected) in [
        (
            "hip-amdgcn-amd-amdhsa-unknown-gfx906",
            "unbundle-hip-rdc-gfx906.lib",
        ),
        ("host-x86_64-pc-windows-msvc", "unbundle-hip-rdc-host.lib"),
    ] {
        let out = sb.path(expected);
        let r = run(
            &sb.ours(),
            &[
                "-type=a".to_owned(),
                "-unbundle".into(),
                format!("-targets={target}"),
                format!("-input={}", coff("hip-rdc.lib")),
                format!("-output={}", out.display()),
            ],
        );
        ok(&r);
        let llvm = std::fs::read(coff(expected)).unwrap();
        assert!(std::fs::read(&out).unwrap() == llvm, "{target}");
    }
}

/// A COFF file LLVM cannot open as an object (its section table cut off) is
/// plain data to the bundler, as to LLVM 22: nothing listed, exit 0. One
/// whose symbol table is cut off is opened without symbols, and its long
/// section names are a located error (LLVM 22: "string table empty").
#[test]
fn damaged_coff_objects_are_read_as_llvm_22_reads_them() {
    let sb = Sandbox::new();
    let rdc = std::fs::read(coff("hip-rdc.o")).unwrap();
    for (len, code, says) in [(300, 0, ""), (6000, 1, "symbol table of")] {
        let cut = sb.path(&format!("cut-{len}.o"));
        std::fs::write(&cut, &rdc[..len]).unwrap();
        let r = run(
            &sb.ours(),
            &[
                "-type=o".to_owned(),
                "-list".into(),
                format!("-input={}", cut.display()),
            ],
        );
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert_eq!(r.status.code(), Some(code), "{len}: {stderr}");
        assert!(
            r.stdout.is_empty() && stderr.contains(says),
            "{len}: {stderr}"
        );
    }
}

/// llvm-offload-binary 22 extracts the OffloadBinary images of a COFF
/// object's `.llvm.offloading`; so does our packager, to the same files.
#[test]
fn the_packager_extracts_from_coff_objects_as_llvm_22() {
    let llvm = std::path::Path::new("/usr/lib/llvm-22/bin/llvm-offload-binary");
    if !llvm.exists() {
        eprintln!("NOTICE: llvm-offload-binary 22 not installed; COFF extraction check skipped");
        return;
    }
    let ours = std::path::Path::new(env!("CARGO_BIN_EXE_clangoffload"));
    let sb = Sandbox::new();
    let input = coff("hip-rdc-new-driver.o");
    let mut written = Vec::new();
    for (dir, tool, first) in [("llvm", llvm, None), ("ours", ours, Some("packager"))] {
        let dir = sb.path(dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut command = std::process::Command::new(tool);
        command.current_dir(&dir).args(first);
        let status = command
            .arg(&input)
            .arg("--image=kind=hip")
            .status()
            .unwrap();
        assert!(status.success(), "{}", dir.display());
        let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                (name, std::fs::read(&p).unwrap())
            })
            .collect();
        files.sort();
        written.push(files);
    }
    assert_eq!(written[0].len(), 1);
    assert!(written[0] == written[1]);
}
