//! A C program unbundles with the high-level job calls
//! (`clangoffload_bundler_unbundle`, `clangoffload_job_*`) and gets the same
//! bytes as clang-offload-bundler 22: a compressed HIP fat binary and a
//! device archive, checked against the outputs LLVM 22 wrote into the
//! fixtures and, where LLVM 22 is installed, against the live tool.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::as_conversions
)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_success, build_c, root, SANITIZERS};

const LLVM_BUNDLER: &str = "/usr/lib/llvm-22/bin/clang-offload-bundler";

/// One unbundling: `-type`, job flags, input, and targets with the fixture
/// LLVM 22 wrote for each (None: compare with the live tool only).
struct Case {
    file_type: &'static str,
    flags: u32,
    llvm_flags: &'static [&'static str],
    input: &'static str,
    targets: &'static [(&'static str, Option<&'static str>)],
}

const CASES: &[Case] = &[
    Case {
        file_type: "o",
        flags: 0,
        llvm_flags: &[],
        input: "tests/fixtures/compressed/llvm22/hip-align4096.v3.ccob",
        targets: &[
            ("hipv4-amdgcn-amd-amdhsa--gfx906", None),
            ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", None),
            ("host-x86_64-unknown-linux-gnu-", None),
        ],
    },
    Case {
        file_type: "a",
        flags: clangoffload_capi::CLANGOFFLOAD_HIP_OPENMP,
        llvm_flags: &["-hip-openmp-compatible"],
        input: "tests/fixtures/archive/gnu-compressed.a",
        targets: &[
            (
                "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+",
                Some("tests/fixtures/archive/unbundle-compressed-hip-gfx90a-xnack.a"),
            ),
            (
                "openmp-amdgcn-amd-amdhsa--gfx906",
                Some("tests/fixtures/archive/unbundle-compressed-openmp-gfx906.a"),
            ),
        ],
    },
];

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir(&format!("jobs-out-{name}"))
}

fn outputs(dir: &Path, case: &Case, prefix: &str) -> Vec<PathBuf> {
    (0..case.targets.len())
        .map(|i| dir.join(format!("{prefix}{i}")))
        .collect()
}

#[test]
fn a_c_program_unbundles_as_clang_offload_bundler_22() {
    if !common::tools_present(&["cc"], "job C test") {
        return;
    }
    let program = build_c(&["capi/tests/c/jobs.c"], SANITIZERS, "jobs");
    let live = Path::new(LLVM_BUNDLER).exists();
    for (n, case) in CASES.iter().enumerate() {
        let dir = scratch(&n.to_string());
        let ours = outputs(&dir, case, "ours");
        let mut run = Command::new(&program);
        run.args([case.file_type, &case.flags.to_string()])
            .arg(root().join(case.input));
        for ((target, _), out) in case.targets.iter().zip(&ours) {
            run.arg(target).arg(out);
        }
        let done = run.env("ASAN_OPTIONS", "detect_leaks=1").output().unwrap();
        assert_success(&done, &format!("jobs on {}", case.input));
        for ((target, fixture), out) in case.targets.iter().zip(&ours) {
            let got = std::fs::read(out).unwrap();
            // (The host entries of these fixtures are empty.)
            assert!(
                target.starts_with("host-") || !got.is_empty(),
                "{}: {target}: empty output",
                case.input
            );
            if let Some(fixture) = fixture {
                let want = std::fs::read(root().join(fixture)).unwrap();
                assert!(
                    got == want,
                    "{}: {target}: differs from {fixture}",
                    case.input
                );
            }
        }
        if live {
            let theirs = outputs(&dir, case, "llvm");
            let targets: Vec<&str> = case.targets.iter().map(|(t, _)| *t).collect();
            let mut llvm = Command::new(LLVM_BUNDLER);
            llvm.arg("-unbundle")
                .arg(format!("-type={}", case.file_type))
                .args(case.llvm_flags)
                .arg(format!("-targets={}", targets.join(",")))
                .arg(format!("-input={}", root().join(case.input).display()));
            for out in &theirs {
                llvm.arg(format!("-output={}", out.display()));
            }
            common::run(&mut llvm);
            for ((target, _), (a, b)) in case.targets.iter().zip(ours.iter().zip(&theirs)) {
                assert!(
                    std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
                    "{}: {target}: ours differs from LLVM 22's",
                    case.input
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    let _ = std::fs::remove_file(&program);
}

#[test]
fn a_missing_target_fails_after_the_found_outputs_are_written() {
    if !common::tools_present(&["cc"], "job C test") {
        return;
    }
    let program = build_c(&["capi/tests/c/jobs.c"], SANITIZERS, "jobs-missing");
    let dir = scratch("missing");
    let (found, missing) = (dir.join("found"), dir.join("missing"));
    let done = Command::new(&program)
        .args(["o", "0"])
        .arg(root().join("tests/fixtures/llvm22/hip-4096.bundle"))
        .args(["hip-amdgcn-amd-amdhsa--gfx906"])
        .arg(&found)
        .args(["hip-amdgcn-amd-amdhsa--gfx908"])
        .arg(&missing)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("jobs: failure: Can't find bundles for hip-amdgcn-amd-amdhsa--gfx908"),
        "the job's notes say its failure as it is made: {stderr}"
    );
    assert!(
        stderr.contains("jobs: error: Can't find bundles for hip-amdgcn-amd-amdhsa--gfx908"),
        "{stderr}"
    );
    assert!(found.exists() && !missing.exists());
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&program);
}

/// The job calls give what core's `bundler` gives, for every bundle fixture
/// and each of its IDs (plus one missing target): same outputs, same
/// failure, same listing.
#[test]
fn jobs_agree_with_core_on_every_fixture() {
    use clangoffload::bundler::{self, FileType, UnbundleRequest};
    use clangoffload_capi as c;

    let mut compared = 0usize;
    for dir in [
        "llvm22",
        "llvm19",
        "llvm16",
        "compressed/llvm22",
        "text",
        "object",
    ] {
        for file in std::fs::read_dir(root().join("tests/fixtures").join(dir)).unwrap() {
            let path = file.unwrap().path();
            if !path.is_file() {
                continue;
            }
            let data = std::fs::read(&path).unwrap();
            let file_type = match path.extension().and_then(|e| e.to_str()) {
                Some("bundle" | "ccob" | "fatbin") => "o",
                Some("o") => "o",
                Some(ext) if FileType::from_name(ext).is_ok() && dir == "text" => ext,
                _ => continue,
            };
            let Ok(listed) = bundler::list(
                &data,
                FileType::from_name(file_type).unwrap(),
                Default::default(),
                &mut (),
            ) else {
                continue;
            };
            let mut ids: Vec<String> = listed
                .iter()
                .map(|(_, id)| String::from_utf8_lossy(id).into_owned())
                .collect();
            ids.push("hip-amdgcn-amd-amdhsa--gfx1100".into());
            for id in &ids {
                let targets = [id.as_str()];
                let request = UnbundleRequest {
                    file_type: FileType::from_name(file_type).unwrap(),
                    targets: &targets,
                    ..UnbundleRequest::default()
                };
                let ours = bundler::unbundle(&data, &request, &mut ());
                let views = [view(id.as_bytes())];
                let options = unbundle_options(file_type, &views);
                let mut job = std::ptr::null_mut();
                // SAFETY: data, options and views are live for the call and
                // the job, which is freed below.
                let status = unsafe {
                    c::clangoffload_bundler_unbundle(
                        data.as_ptr(),
                        data.len(),
                        &options,
                        &mut job,
                        std::ptr::null_mut(),
                    )
                };
                let what = format!("{} -targets={id}", path.display());
                match ours {
                    Err(_) => assert_ne!(status, c::clangoffload_status::Ok, "{what}"),
                    Ok(plan) => {
                        assert_eq!(status, c::clangoffload_status::Ok, "{what}");
                        let dir = scratch(&format!("agree-{compared}"));
                        let out = dir.join("out");
                        let path_c = std::ffi::CString::new(out.to_str().unwrap()).unwrap();
                        // SAFETY: the job is live; a NULL error record is
                        // allowed.
                        let failure =
                            unsafe { c::clangoffload_job_failure(job, std::ptr::null_mut()) };
                        // SAFETY: the job is live; the path NUL-terminated.
                        let wrote =
                            unsafe { c::clangoffload_job_write_path(job, 0, path_c.as_ptr()) };
                        assert_eq!(
                            failure == c::clangoffload_status::Ok,
                            plan.failure().is_none(),
                            "{what}"
                        );
                        assert_eq!(wrote, c::clangoffload_status::Ok, "{what}");
                        let want = plan.output_bytes(0).unwrap();
                        assert!(
                            std::fs::read(&out).unwrap() == want,
                            "{what}: the C job wrote other bytes than core's plan"
                        );
                        // The same, copied file to file from the input.
                        let copied = dir.join("copied");
                        let (input, to) = (
                            std::fs::File::open(&path).unwrap(),
                            std::fs::File::create(&copied).unwrap(),
                        );
                        let fds = [std::os::fd::AsRawFd::as_raw_fd(&input)];
                        let mut output = std::mem::MaybeUninit::uninit();
                        // SAFETY: the job is live; the descriptors open,
                        // `fds` one of them; a NULL error record is allowed.
                        let wrote = unsafe {
                            c::clangoffload_job_write_fd_from(
                                job,
                                0,
                                std::os::fd::AsRawFd::as_raw_fd(&to),
                                fds.as_ptr(),
                                1,
                                std::ptr::null_mut(),
                            )
                        };
                        // SAFETY: the job is live; the record writable.
                        let got =
                            unsafe { c::clangoffload_job_get_output(job, 0, output.as_mut_ptr()) };
                        assert_eq!(
                            (wrote, got),
                            (c::clangoffload_status::Ok, c::clangoffload_status::Ok),
                            "{what}"
                        );
                        // SAFETY: filled on OK.
                        let output = unsafe { output.assume_init() };
                        assert_eq!(output.size, plan.output_size(0), "{what}");
                        assert_eq!(output.written, plan.writes(0), "{what}");
                        assert!(
                            std::fs::read(&copied).unwrap() == want,
                            "{what}: copying file to file gave other bytes"
                        );
                        let _ = std::fs::remove_dir_all(&dir);
                    }
                }
                // SAFETY: NULL or a job from above, freed once.
                unsafe { c::clangoffload_job_free(job) };
                compared += 1;
            }
        }
    }
    assert!(compared > 50, "only {compared} comparisons");
    println!("{compared} unbundlings compared");
}

/// The C calls that pick one entry give the entry of exactly the requested
/// ID even when a merely compatible one comes first.
#[test]
fn an_exact_id_wins_in_the_c_selection_calls() {
    use clangoffload::bundle::write_bundle;
    use clangoffload_capi as c;

    let data = write_bundle(
        &[
            (b"hip-amdgcn-amd-amdhsa-gfx906", b"906"),
            (b"hip-amdgcn-amd-amdhsa-gfx90a", b"90a"),
        ],
        1,
    )
    .unwrap();
    for (target, want) in [
        ("hip-amdgcn-amd-amdhsa-gfx90a", 1usize),
        ("hip-amdgcn-amd-amdhsa-gfx906", 0),
    ] {
        let mut handle = std::ptr::null_mut();
        let mut index = usize::MAX;
        let mut entry = std::mem::MaybeUninit::<c::clangoffload_bundle_entry>::uninit();
        // SAFETY: `data` is live for the call and outlives the handle,
        // freed below; `handle` is writable.
        let parsed = unsafe {
            c::clangoffload_bundle_parse(
                data.as_ptr(),
                data.len(),
                0,
                &mut handle,
                std::ptr::null_mut(),
            )
        };
        // SAFETY: the handle is live (or NULL, refused); `target` is live
        // for the call; `index` is writable.
        let found = unsafe {
            c::clangoffload_bundle_find_compatible(
                handle,
                target.as_ptr().cast(),
                target.len(),
                0,
                &mut index,
            )
        };
        // SAFETY: the handle from the parse above, freed once.
        unsafe { c::clangoffload_bundle_free(handle) };
        // SAFETY: `data` and `target` are live for the call; `entry` is a
        // writable record.
        let direct = unsafe {
            c::clangoffload_bundle_find_compatible_entry(
                data.as_ptr(),
                data.len(),
                target.as_ptr().cast(),
                target.len(),
                0,
                entry.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        assert_eq!(parsed, c::clangoffload_status::Ok);
        assert_eq!(
            (found, index),
            (c::clangoffload_status::Ok, want),
            "{target}"
        );
        assert_eq!(direct, c::clangoffload_status::Ok, "{target}");
        // SAFETY: written whole on OK, asserted just above.
        let entry = unsafe { entry.assume_init() };
        // SAFETY: the view borrows `data`.
        let payload = unsafe { std::slice::from_raw_parts(entry.payload.ptr, entry.payload.len) };
        assert_eq!(payload, [&b"906"[..], b"90a"][want], "{target}");
    }
}

/// Writing to a descriptor that cannot be written gives the system's
/// message in the error record, without Rust's "(os error N)".
#[test]
fn a_write_error_says_what_the_system_said() {
    use clangoffload_capi as c;
    let data = std::fs::read(root().join("tests/fixtures/llvm22/hip-4096.bundle")).unwrap();
    let targets = [view(b"hip-amdgcn-amd-amdhsa--gfx906")];
    let options = unbundle_options("o", &targets);
    let read_only = std::fs::File::open(root().join("Cargo.toml")).unwrap();
    let mut job = std::ptr::null_mut();
    let mut err = std::mem::MaybeUninit::<c::clangoffload_error>::zeroed();
    // SAFETY: data, options and views live for the call; `job` writable.
    let made = unsafe {
        c::clangoffload_bundler_unbundle(
            data.as_ptr(),
            data.len(),
            &options,
            &mut job,
            std::ptr::null_mut(),
        )
    };
    // SAFETY: the job is live; no input descriptors (NULL with count 0);
    // the error record writable.
    let wrote = unsafe {
        c::clangoffload_job_write_fd_from(
            job,
            0,
            std::os::fd::AsRawFd::as_raw_fd(&read_only),
            std::ptr::null(),
            0,
            err.as_mut_ptr(),
        )
    };
    // SAFETY: the job from the unbundling above, freed once.
    unsafe { c::clangoffload_job_free(job) };
    // SAFETY: zeroed is a valid error record (a plain C struct of integers
    // and bytes), whatever the call wrote.
    let err = unsafe { err.assume_init() };
    assert_eq!(made, c::clangoffload_status::Ok);
    assert_eq!(wrote, c::clangoffload_status::IoError);
    // SAFETY: the library NUL-terminates the message.
    let message = unsafe { std::ffi::CStr::from_ptr(err.message.as_ptr()) };
    assert_eq!(message.to_str().unwrap(), "Bad file descriptor");
}

fn view(bytes: &[u8]) -> clangoffload_capi::clangoffload_bytes {
    clangoffload_capi::clangoffload_bytes {
        ptr: bytes.as_ptr(),
        len: bytes.len(),
    }
}

/// Options to unbundle `targets` from a file of `file_type`, no notes.
fn unbundle_options(
    file_type: &str,
    targets: &[clangoffload_capi::clangoffload_bytes],
) -> clangoffload_capi::clangoffload_bundler_options {
    clangoffload_capi::clangoffload_bundler_options {
        file_type: view(file_type.as_bytes()),
        targets: targets.as_ptr(),
        target_count: targets.len(),
        flags: 0,
        max_decompressed_size: 0,
        input_name: view(&[]),
        notify: None,
        context: std::ptr::null_mut(),
    }
}

/// The parts of the input a job said it was done with
/// (`CLANGOFFLOAD_NOTE_DONE_WITH`), as (offset, len) in the input.
struct DoneWith {
    base: usize,
    parts: Vec<(usize, usize)>,
    other_kinds: Vec<u32>,
}

unsafe extern "C" fn collect_done_with(
    context: *mut std::ffi::c_void,
    kind: u32,
    message: *const u8,
    len: usize,
) {
    // SAFETY: the test passes its DoneWith as the context.
    let done = unsafe { &mut *context.cast::<DoneWith>() };
    if kind == clangoffload_capi::CLANGOFFLOAD_NOTE_DONE_WITH {
        done.parts.push((message as usize - done.base, len));
    } else {
        done.other_kinds.push(kind);
    }
}

/// Lists `input` with `flags`, collecting the done-with notes.
fn list_noting(input: &[u8], flags: u32) -> DoneWith {
    let mut done = DoneWith {
        base: input.as_ptr() as usize,
        parts: Vec::new(),
        other_kinds: Vec::new(),
    };
    let mut options = unbundle_options("", &[]);
    options.flags = flags;
    options.notify = Some(collect_done_with);
    options.context = std::ptr::from_mut(&mut done).cast();
    let mut job = std::ptr::null_mut();
    // SAFETY: the input and options outlive the job, freed below.
    let status = unsafe {
        clangoffload_capi::clangoffload_bundler_list(
            input.as_ptr(),
            input.len(),
            &options,
            &mut job,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, clangoffload_capi::clangoffload_status::Ok);
    // SAFETY: made above, freed once.
    unsafe { clangoffload_capi::clangoffload_job_free(job) };
    done
}

/// A caller that asks is told, container by container, which compressed
/// bundles of a linked `.hip_fatbin` the list job is done with: each one
/// whole, in file order, inside the input; a caller that does not ask
/// gets no such note (it would not be text).
#[test]
fn list_says_which_compressed_bundles_it_is_done_with() {
    for (file, compressed) in [
        ("libhip-compressed3.so", 3),
        ("libhip-mixed3.so", 1),
        ("hip-compressed3.dll", 3),
    ] {
        let input = std::fs::read(root().join("tests/fixtures/multi").join(file)).unwrap();
        let done = list_noting(&input, clangoffload_capi::CLANGOFFLOAD_NOTIFY_DONE_WITH);
        assert_eq!(done.parts.len(), compressed, "{file}");
        assert!(done.other_kinds.is_empty(), "{file}");
        let mut end = 0;
        for &(offset, len) in &done.parts {
            assert!(offset >= end && offset + len <= input.len(), "{file}");
            assert_eq!(&input[offset..offset + 4], b"CCOB", "{file}");
            let total = u64::from_le_bytes(input[offset + 8..offset + 16].try_into().unwrap());
            assert_eq!(
                len as u64, total,
                "{file}: the whole bundle (v3 total size)"
            );
            end = offset + len;
        }
        let quiet = list_noting(&input, 0);
        assert!(quiet.parts.is_empty(), "{file}");
    }
}

/// What a stream wrote and said, gathered by the callbacks below.
#[derive(Default)]
struct Streamed {
    count: usize,
    asked: usize,
    outputs: Vec<Vec<u8>>,
    done: Vec<(usize, clangoffload_capi::clangoffload_status)>,
    gaps: usize,
    /// Read back every output but this one.
    unreadable: Option<usize>,
    /// Read back this output with its bytes changed.
    changed: Option<usize>,
    read_backs: usize,
}

unsafe extern "C" fn streamed_read(
    context: *mut std::ffi::c_void,
    output: usize,
    offset: u64,
    bytes: *mut u8,
    len: usize,
) -> i32 {
    // SAFETY: the context is the `Streamed` the test passed with the
    // call, reached by nothing else during this callback.
    let s = unsafe { &mut *context.cast::<Streamed>() };
    // SAFETY: the library passes `len` bytes writable during the call.
    let bytes = unsafe { std::slice::from_raw_parts_mut(bytes, len) };
    s.read_backs += 1;
    let from = offset as usize;
    match s.outputs[output].get(from..from + len) {
        Some(held) if s.unreadable != Some(output) => {
            bytes.copy_from_slice(held);
            if s.changed == Some(output) {
                bytes.iter_mut().for_each(|b| *b ^= 1);
            }
            0
        }
        _ => 1,
    }
}

unsafe extern "C" fn streamed_next(context: *mut std::ffi::c_void, container: *mut usize) -> bool {
    // SAFETY: the test passes its Streamed as the context.
    let s = unsafe { &mut *context.cast::<Streamed>() };
    if s.asked == s.count {
        return false;
    }
    // SAFETY: the library gives a writable slot.
    unsafe { *container = s.asked };
    s.asked += 1;
    true
}

unsafe extern "C" fn streamed_write(
    context: *mut std::ffi::c_void,
    output: usize,
    offset: u64,
    bytes: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: the context is the `Streamed` the test passed with the
    // call, reached by nothing else during this callback.
    let s = unsafe { &mut *context.cast::<Streamed>() };
    // SAFETY: the library passes `len` bytes live during the call.
    let bytes = unsafe { std::slice::from_raw_parts(bytes, len) };
    let out = &mut s.outputs[output];
    if out.len() as u64 != offset {
        s.gaps += 1;
    }
    out.extend_from_slice(bytes);
    0
}

unsafe extern "C" fn streamed_done(
    context: *mut std::ffi::c_void,
    container: usize,
    status: clangoffload_capi::clangoffload_status,
    _error: *const clangoffload_capi::clangoffload_error,
) {
    // SAFETY: as above.
    let s = unsafe { &mut *context.cast::<Streamed>() };
    s.done.push((container, status));
}

/// `clangoffload_extraction_stream` gives every output the bytes the
/// whole extraction gives, in order and without gaps, with any number of
/// lanes; bad arguments are refused.
#[test]
fn an_extraction_streamed_gives_every_output_its_bytes() {
    use clangoffload_capi::clangoffload_status as S;
    for file in [
        "libhip-compressed3.so",
        "libhip-mixed3.so",
        "hip-compressed3.dll",
    ] {
        let input = std::fs::read(root().join("tests/fixtures/multi").join(file)).unwrap();
        let whole = clangoffload::extract::extract(
            &input,
            b"f",
            clangoffload::bundler::Decoding::default(),
            &mut (),
        )
        .unwrap();
        let options = unbundle_options("", &[]);
        let mut x = std::ptr::null_mut();
        // SAFETY: the input and options outlive the extraction, freed below.
        let made = unsafe {
            clangoffload_capi::clangoffload_bundler_extraction(
                input.as_ptr(),
                input.len(),
                &options,
                &mut x,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(made, S::Ok, "{file}");
        // SAFETY: live.
        let count = unsafe { clangoffload_capi::clangoffload_extraction_container_count(x) };
        for lanes in [1, 2, 4] {
            let mut s = Streamed {
                count,
                outputs: vec![Vec::new(); whole.output_count()],
                ..Streamed::default()
            };
            let sink = clangoffload_capi::clangoffload_extraction_sink {
                next: Some(streamed_next),
                write: Some(streamed_write),
                done: Some(streamed_done),
                context: std::ptr::from_mut(&mut s).cast(),
            };
            // SAFETY: the extraction is live; the sink and context too.
            let status = unsafe {
                clangoffload_capi::clangoffload_extraction_stream(
                    x,
                    lanes,
                    &sink,
                    None,
                    std::ptr::null_mut(),
                )
            };
            assert_eq!(status, S::Ok, "{file}, {lanes} lanes");
            assert_eq!(s.gaps, 0);
            let mut done = s.done.clone();
            done.sort_unstable_by_key(|d| d.0);
            assert_eq!(done, (0..count).map(|c| (c, S::Ok)).collect::<Vec<_>>());
            for (i, bytes) in s.outputs.iter().enumerate() {
                assert_eq!(bytes, &whole.output_bytes(i).unwrap(), "{file}: output {i}");
            }
        }
        let mut s = Streamed::default();
        let mut sink = clangoffload_capi::clangoffload_extraction_sink {
            next: Some(streamed_next),
            write: Some(streamed_write),
            done: Some(streamed_done),
            context: std::ptr::from_mut(&mut s).cast(),
        };
        for lanes in [0, 5] {
            // SAFETY: as above.
            let status = unsafe {
                clangoffload_capi::clangoffload_extraction_stream(
                    x,
                    lanes,
                    &sink,
                    None,
                    std::ptr::null_mut(),
                )
            };
            assert_eq!(status, S::InvalidArgument);
        }
        sink.write = None;
        // SAFETY: as above.
        let status = unsafe {
            clangoffload_capi::clangoffload_extraction_stream(
                x,
                2,
                &sink,
                None,
                std::ptr::null_mut(),
            )
        };
        assert_eq!(status, S::NullArgument);
        // SAFETY: made above, freed once.
        unsafe { clangoffload_capi::clangoffload_extraction_free(x) };
    }
}

/// `clangoffload_extraction_stream_read_back`: the same bytes as the whole
/// extraction, every container checked from what it reads back (a wrong
/// byte read back is a hash mismatch), an output it cannot read back
/// leaves its container unverifiable and no other; bad arguments refused.
#[test]
fn an_extraction_streamed_reading_back_checks_what_it_reads() {
    use clangoffload_capi::clangoffload_status as S;
    let input = std::fs::read(root().join("tests/fixtures/multi/libhip-compressed3.so")).unwrap();
    let whole = clangoffload::extract::extract(
        &input,
        b"f",
        clangoffload::bundler::Decoding::default(),
        &mut (),
    )
    .unwrap();
    let options = unbundle_options("", &[]);
    let mut x = std::ptr::null_mut();
    // SAFETY: the input and options outlive the extraction, freed below.
    let made = unsafe {
        clangoffload_capi::clangoffload_bundler_extraction(
            input.as_ptr(),
            input.len(),
            &options,
            &mut x,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(made, S::Ok);
    // SAFETY: live.
    let count = unsafe { clangoffload_capi::clangoffload_extraction_container_count(x) };
    let run = |lanes: usize, unreadable: Option<usize>, changed: Option<usize>, read: bool| {
        let mut s = Streamed {
            count,
            outputs: vec![Vec::new(); whole.output_count()],
            unreadable,
            changed,
            ..Streamed::default()
        };
        let sink = clangoffload_capi::clangoffload_extraction_sink {
            next: Some(streamed_next),
            write: Some(streamed_write),
            done: Some(streamed_done),
            context: std::ptr::from_mut(&mut s).cast(),
        };
        // SAFETY: the extraction is live; the sink and context too.
        let status = unsafe {
            clangoffload_capi::clangoffload_extraction_stream_read_back(
                x,
                lanes,
                &sink,
                if read { Some(streamed_read) } else { None },
                None,
                std::ptr::null_mut(),
            )
        };
        s.done.sort_unstable_by_key(|d| d.0);
        (status, s)
    };
    for lanes in [1, 3, 8] {
        let (status, s) = run(lanes, None, None, true);
        assert_eq!(status, S::Ok, "{lanes} lanes");
        assert!(s.read_backs > 0);
        assert_eq!(s.done, (0..count).map(|c| (c, S::Ok)).collect::<Vec<_>>());
        for (i, bytes) in s.outputs.iter().enumerate() {
            assert_eq!(bytes, &whole.output_bytes(i).unwrap(), "output {i}");
        }
    }
    // Output 1 (of the first container) cannot be read back, or reads
    // back changed.
    for (unreadable, changed, status) in [
        (Some(1), None, S::Unverifiable),
        (None, Some(1), S::HashMismatch),
    ] {
        let (ran, s) = run(8, unreadable, changed, true);
        assert_eq!(ran, S::Ok);
        let want: Vec<_> = (0..count)
            .map(|c| (c, if c == 0 { status } else { S::Ok }))
            .collect();
        assert_eq!(s.done, want);
    }
    for lanes in [0, 9] {
        assert_eq!(run(lanes, None, None, true).0, S::InvalidArgument);
    }
    assert_eq!(run(8, None, None, false).0, S::NullArgument);
    // SAFETY: made above, freed once.
    unsafe { clangoffload_capi::clangoffload_extraction_free(x) };
}
