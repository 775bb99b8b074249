//! The bundler's jobs, whole: what a file is, `-list`, `-unbundle` and
//! bundling with clang-offload-bundler 22's rules (core's `bundler`), so a C
//! build tool or runtime does in one call what the `clangoffload` tool does.
//! A job returns a `clangoffload_job`: for each output, the pieces it is made
//! of, to write where the caller likes (or with `clangoffload_job_write_fd`
//! / `_write_path`).

use alloc::string::String;
use alloc::vec::Vec;
use core::ffi::{c_char, c_void};

use clangoffload::bundler::{
    self, BundleRequest, BundlerError, Compression, Decoding, Extraction, FileType, Listed, Note,
    Piece, Plan, UnbundleRequest, Warning,
};
use clangoffload::foreign::{Foreign, NoContainer};
use clangoffload::{CompressionMethod, FileKind};

use crate::ffi::{array_arg, clangoffload_bytes, free_handle, handle_arg, into_handle, out_arg};
use crate::ffi::{slice_arg, write_display};
use crate::status::{clangoffload_error, clangoffload_status, report_bundler};

/// `clangoffload_bundler_options.flags`: `-allow-missing-bundles`.
pub const CLANGOFFLOAD_ALLOW_MISSING_BUNDLES: u32 = 1;
/// `-hip-openmp-compatible`.
pub const CLANGOFFLOAD_HIP_OPENMP: u32 = 2;
/// `-check-input-archive`.
pub const CLANGOFFLOAD_CHECK_INPUT_ARCHIVE: u32 = 4;
/// Accept a compressed bundle whose hash is wrong (LLVM never checks it).
pub const CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK: u32 = 8;
/// Report what LLVM's `-verbose` prints (as `CLANGOFFLOAD_NOTE_VERBOSE`).
pub const CLANGOFFLOAD_VERBOSE: u32 = 16;
/// Tell `notify` which parts of the input the job is done with
/// (`CLANGOFFLOAD_NOTE_DONE_WITH`), so that a caller that mapped a file can
/// let their pages go as the job goes on.
pub const CLANGOFFLOAD_NOTIFY_DONE_WITH: u32 = 32;

/// A note's kind, passed to `clangoffload_notify_fn` (a caller ignores
/// kinds it does not know): a warning (the job goes on).
pub const CLANGOFFLOAD_NOTE_WARNING: u32 = 1;
/// Lines LLVM's `-verbose` prints, each ending in `\n`.
pub const CLANGOFFLOAD_NOTE_VERBOSE: u32 = 2;
/// The whole message of the error the job returns (the error record's
/// message holds at most 255 bytes of it).
pub const CLANGOFFLOAD_NOTE_ERROR: u32 = 3;
/// The whole message of the failure a job reports once its outputs are
/// written (`clangoffload_job_failure`), given as the job is made.
pub const CLANGOFFLOAD_NOTE_FAILURE: u32 = 4;
/// Only with `CLANGOFFLOAD_NOTIFY_DONE_WITH`: `message` and `len` are not
/// text but a part of the job's input (a compressed bundle whose entry
/// table, or whole contents, the job has decoded into its own memory). The
/// job needs those bytes no more for now, so a caller that mapped a file
/// may drop their pages (`madvise(MADV_DONTNEED)` on a private read-only
/// map; Linux otherwise keeps mapped every large page-cache folio a job
/// touched). They must stay readable: the job, or a later job over the same
/// input, may read them again.
pub const CLANGOFFLOAD_NOTE_DONE_WITH: u32 = 5;

/// Receives a job's notes as they happen: `kind` is a
/// `CLANGOFFLOAD_NOTE_*`, `message` points to `len` bytes of UTF-8 text (not
/// NUL-terminated), valid only during the call.
pub type clangoffload_notify_fn =
    Option<unsafe extern "C" fn(context: *mut c_void, kind: u32, message: *const u8, len: usize)>;

/// What a file is, by its magic (`clangoffload_file_kind_detect`).
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_file_kind_tag {
    /// Anything else.
    Other = 0,
    /// A binary bundle.
    Bundle = 1,
    /// A compressed bundle (`CCOB`).
    CompressedBundle = 2,
    /// An OffloadBinary.
    OffloadBinary = 3,
    /// A text bundle (`text_comment` says which comment its markers use).
    TextBundle = 4,
    /// An ELF file (`elf_*` say more).
    Elf = 5,
    /// A Mach-O file.
    MachO = 6,
    /// LLVM bitcode.
    Bitcode = 7,
    /// An `ar` archive.
    Archive = 8,
    /// A thin `ar` archive.
    ThinArchive = 9,
    /// A COFF object or a PE image (not read yet).
    Coff = 10,
    /// An NVIDIA CUDA fat binary.
    CudaFatbin = 11,
}

/// What `clangoffload_file_kind_detect` found.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_file_kind {
    /// The kind.
    pub kind: clangoffload_file_kind_tag,
    /// ELF only: `EI_CLASS` (1: 32-bit, 2: 64-bit).
    pub elf_class: u8,
    /// ELF only: `EI_DATA` (1: little-endian, 2: big-endian).
    pub elf_encoding: u8,
    /// ELF only: `e_machine`.
    pub elf_machine: u16,
    /// Whether LLVM opens the file as an object (`-type=o` reads sections).
    pub is_object: bool,
    /// Text bundles only: the comment, `'/'` (`//`), `'#'` or `';'`; else 0.
    pub text_comment: u8,
}

/// Says what the `len` bytes at `data` are, from their magic (every magic
/// this library knows; a text bundle by its first start marker).
///
/// Ownership: nothing to free; `*out` is a plain record. Pure.
///
/// NULL: `data` may be NULL only when `len` is 0; `out` must not be NULL.
///
/// # Safety
/// `data` must be readable for `len` bytes; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_file_kind_detect(
    data: *const u8,
    len: usize,
    out: *mut clangoffload_file_kind,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        *out = file_kind(FileKind::detect(data));
        Ok(())
    })
}

/// Writes what the `len` bytes at `data` are when they hold no offload
/// container or CUDA fat binary, in the words `clangoffload list`, `extract`
/// and `inspect` use (`no offload container or CUDA fat binary: ` and what
/// it is): a raw AMDGPU code object with its target ID, a CUDA
/// cubin with its SM, a kpack archive, MessagePack data (Tensile's `.dat`),
/// another ELF, COFF or Mach-O file, bitcode, an archive, or bytes of no
/// known format (`it is an AMDGPU code object for
/// amdgcn-amd-amdhsa--gfx906`). Reads headers only,
/// except MessagePack, which is walked once without allocating.
/// `*out_device_code` (if not NULL) says whether the file is device code of
/// its own (a code object or cubin).
///
/// Ownership: the text is copied into the caller's `buf`, as
/// `clangoffload_target_id_canonicalize` does (NUL-terminated; `*out_len`
/// its length; `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL` with the length
/// needed when `cap` is too small); nothing to free. Pure.
///
/// NULL: `data` may be NULL only when `len` is 0; `buf` NULL asks for the
/// length; `out_len` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`;
/// `out_device_code` may be NULL.
///
/// # Safety
/// `data` must be readable for `len` bytes; `buf` NULL or writable for `cap`
/// bytes; `out_len` and `out_device_code` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_file_describe(
    data: *const u8,
    len: usize,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
    out_device_code: *mut bool,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the call, as the caller promises.
        let data = unsafe { slice_arg(data, len) }?;
        let foreign = Foreign::identify(data);
        // SAFETY: NULL or writable, as the caller promises.
        if let Ok(device_code) = unsafe { out_arg(out_device_code) } {
            *device_code = foreign.is_device_code();
        }
        // SAFETY: buf writable for cap bytes, out_len writable, as promised.
        unsafe { write_display(&NoContainer(foreign), buf, cap, out_len) }
    })
}

fn file_kind(kind: FileKind) -> clangoffload_file_kind {
    use clangoffload_file_kind_tag as T;
    let mut out = clangoffload_file_kind {
        kind: T::Other,
        elf_class: 0,
        elf_encoding: 0,
        elf_machine: 0,
        is_object: kind.is_object(),
        text_comment: 0,
    };
    out.kind = match kind {
        FileKind::Bundle => T::Bundle,
        FileKind::CompressedBundle => T::CompressedBundle,
        FileKind::OffloadBinary => T::OffloadBinary,
        FileKind::TextBundle(comment) => {
            out.text_comment = comment.as_str().as_bytes().first().copied().unwrap_or(0);
            T::TextBundle
        }
        FileKind::Elf(elf) => {
            out.elf_class = elf.class;
            out.elf_encoding = elf.encoding;
            out.elf_machine = elf.machine;
            T::Elf
        }
        FileKind::MachO => T::MachO,
        FileKind::Coff(_) => T::Coff,
        FileKind::Bitcode => T::Bitcode,
        FileKind::Archive => T::Archive,
        FileKind::ThinArchive => T::ThinArchive,
        FileKind::CudaFatbin => T::CudaFatbin,
        _ => T::Other,
    };
    out
}

/// How a job reads its input (for `clangoffload_bundler_list` and
/// `clangoffload_bundler_unbundle`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_bundler_options {
    /// `-type`: `o`, `bc`, `a`, `i`, `ll`, ... (for listing, empty means
    /// "any file": every bundle, object, text bundle or archive member).
    pub file_type: clangoffload_bytes,
    /// `-targets` as given (unbundling only): `target_count` views.
    pub targets: *const clangoffload_bytes,
    /// How many targets.
    pub target_count: usize,
    /// `CLANGOFFLOAD_ALLOW_MISSING_BUNDLES`, `_HIP_OPENMP`,
    /// `_CHECK_INPUT_ARCHIVE`, `_SKIP_HASH_CHECK`, `_VERBOSE`.
    pub flags: u32,
    /// The most each compressed bundle of the input may decompress to; 0
    /// for the default (1 GiB).
    pub max_decompressed_size: u64,
    /// The input's name, for messages (may be empty).
    pub input_name: clangoffload_bytes,
    /// Receives warnings, verbose reports and the full error message; may be
    /// NULL.
    pub notify: clangoffload_notify_fn,
    /// Passed to `notify`.
    pub context: *mut c_void,
}

/// What to bundle (`clangoffload_bundler_bundle`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_bundle_request {
    /// `-type`.
    pub file_type: clangoffload_bytes,
    /// `-targets` as given: `count` views.
    pub targets: *const clangoffload_bytes,
    /// The input of each target: `count` views.
    pub inputs: *const clangoffload_bytes,
    /// How many targets and inputs.
    pub count: usize,
    /// `-bundle-align` (at least 1).
    pub align: u64,
    /// Whether to compress (`-compress`).
    pub compress: bool,
    /// `CLANGOFFLOAD_COMPRESSION_ZLIB` or `_ZSTD`.
    pub compression_method: u32,
    /// The compressed bundle's header version: 2 or 3.
    pub compression_version: u16,
    /// The level, if `has_compression_level`.
    pub compression_level: i32,
    /// Whether `compression_level` is set (else the method's default).
    pub has_compression_level: bool,
    /// `CLANGOFFLOAD_VERBOSE` (the other flags do not apply).
    pub flags: u32,
    /// The host input's name, for messages about it (may be empty).
    pub input_name: clangoffload_bytes,
    /// As in `clangoffload_bundler_options`.
    pub notify: clangoffload_notify_fn,
    /// Passed to `notify`.
    pub context: *mut c_void,
}

/// A job's result: outputs made of pieces, or listed IDs, and the error to
/// report once the outputs are written.
pub struct clangoffload_job {
    plan: Plan<'static>,
    listed: Listed<'static>,
    /// For the failure's message.
    input_name: String,
}

/// What a job that reads one input makes: a job, or an extraction.
trait ReadHandle {
    /// The errors to report once what could be read is written.
    fn failures(&self) -> &[BundlerError];
    /// The input's name, for that error's message.
    fn set_input_name(&mut self, name: String);
}

impl ReadHandle for clangoffload_job {
    fn failures(&self) -> &[BundlerError] {
        self.plan.failure().map_or(&[], core::slice::from_ref)
    }

    fn set_input_name(&mut self, name: String) {
        self.input_name = name;
    }
}

impl clangoffload_job {
    /// A job of `plan`'s outputs (other modules' jobs: the packager's).
    pub(crate) fn from_plan(plan: Plan<'static>, input_name: String) -> Self {
        clangoffload_job {
            plan,
            listed: Listed::default(),
            input_name,
        }
    }
}

/// What a piece of an output is.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum clangoffload_piece_kind {
    /// Bytes of input `input` at `input_offset` (a view of the caller's
    /// buffer).
    Input = 0,
    /// Bytes the job made (a view of the job's memory).
    Made = 1,
    /// `zeros` zero bytes.
    Zeros = 2,
}

/// One piece of an output.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_piece {
    /// What it is.
    pub kind: clangoffload_piece_kind,
    /// `Input`: which input (0 for jobs with one).
    pub input: usize,
    /// `Input`: where the bytes start in it.
    pub input_offset: u64,
    /// `Input`, `Made`: the bytes.
    pub bytes: clangoffload_bytes,
    /// `Zeros`: how many.
    pub zeros: u64,
}

/// One output of a job (`clangoffload_job_get_output`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_job_output {
    /// The name the job chose for it (an extraction's file name; empty for
    /// other jobs).
    pub name: clangoffload_bytes,
    /// Its size in bytes.
    pub size: u64,
    /// Whether to write it: LLVM creates every output unless the job fails
    /// (`clangoffload_job_failure`), and then only those it found something
    /// for.
    pub written: bool,
}

/// Forwards core's notes to the caller's `notify`, timing decoding and
/// compression for the verbose reports where the build has a clock.
struct Notifier {
    notify: clangoffload_notify_fn,
    context: *mut c_void,
    input_name: String,
    /// Whether verbose reports are wanted (`CLANGOFFLOAD_VERBOSE`).
    verbose: bool,
    /// Whether the caller wants `CLANGOFFLOAD_NOTE_DONE_WITH`.
    done_with: bool,
    #[cfg(feature = "std")]
    started: Option<std::time::Instant>,
}

impl Notifier {
    fn new(
        notify: clangoffload_notify_fn,
        context: *mut c_void,
        input_name: String,
        flags: u32,
    ) -> Self {
        Notifier {
            notify,
            context,
            input_name,
            verbose: flags & CLANGOFFLOAD_VERBOSE != 0,
            done_with: flags & CLANGOFFLOAD_NOTIFY_DONE_WITH != 0,
            #[cfg(feature = "std")]
            started: None,
        }
    }

    fn send(&self, kind: u32, text: &str) {
        if kind == CLANGOFFLOAD_NOTE_VERBOSE && !self.verbose {
            return;
        }
        self.send_bytes(kind, text.as_bytes());
    }

    fn send_bytes(&self, kind: u32, bytes: &[u8]) {
        if let Some(notify) = self.notify {
            // SAFETY: the caller gave this function and context for the
            // job's duration; the bytes are live during the call.
            unsafe { notify(self.context, kind, bytes.as_ptr(), bytes.len()) }
        }
    }

    fn start(&mut self) {
        #[cfg(feature = "std")]
        {
            self.started = Some(std::time::Instant::now());
        }
    }

    fn seconds(&self) -> f64 {
        #[cfg(feature = "std")]
        if let Some(started) = self.started {
            return started.elapsed().as_secs_f64();
        }
        0.0
    }

    fn error(&self, e: &BundlerError) {
        self.send(
            CLANGOFFLOAD_NOTE_ERROR,
            &alloc::format!("{}", e.message(&self.input_name)),
        );
    }
}

impl bundler::Observer for Notifier {
    fn note(&mut self, note: Note) {
        match note {
            Note::Warning(warning) => {
                let text = warning_text(&warning, &self.input_name);
                self.send(CLANGOFFLOAD_NOTE_WARNING, &text);
            }
            Note::Decoding { .. } | Note::Compressing => self.start(),
            Note::Decoded(decoded) => {
                let text = alloc::format!(
                    "{}",
                    bundler::report::decompression(&decoded, self.seconds())
                );
                self.send(CLANGOFFLOAD_NOTE_VERBOSE, &text);
            }
            Note::Compressed(made) => {
                let text =
                    alloc::format!("{}", bundler::report::compression(&made, self.seconds()));
                self.send(CLANGOFFLOAD_NOTE_VERBOSE, &text);
            }
            Note::Uncompressed { .. } => {
                self.send(CLANGOFFLOAD_NOTE_VERBOSE, "Uncompressed bundle.\n")
            }
            _ => {}
        }
    }

    fn done_with(&mut self, bytes: &[u8]) {
        if self.done_with {
            self.send_bytes(CLANGOFFLOAD_NOTE_DONE_WITH, bytes);
        }
    }
}

/// A warning's text as the tool prints it after `warning: `.
fn warning_text(warning: &Warning, input: &str) -> String {
    alloc::format!("{}", warning.message(input))
}

/// # Safety
/// `views` must be NULL (only with `count` 0) or readable for `count`
/// views, each readable for the job's duration.
unsafe fn strings<'a>(
    views: *const clangoffload_bytes,
    count: usize,
) -> Result<Vec<&'a str>, clangoffload_status> {
    // SAFETY: forwarded to the caller.
    let views = unsafe { array_arg(views, count) }?;
    views
        .iter()
        .map(|v| {
            // SAFETY: readable, as the caller promises.
            let bytes = unsafe { v.as_slice() }?;
            core::str::from_utf8(bytes).map_err(|_| clangoffload_status::InvalidUtf8)
        })
        .collect()
}

/// What a job that reads one input takes from its options.
struct ReadOptions<'a> {
    /// `-type`; `None` when empty.
    file_type: Option<&'a str>,
    /// `-targets`.
    targets: Vec<&'a str>,
    /// The input's name, for messages.
    name: &'a str,
    flags: u32,
    decoding: Decoding,
}

/// Reads and checks the options.
///
/// # Safety
/// The views in `options` must be readable for the call.
unsafe fn read_options(
    options: &clangoffload_bundler_options,
) -> Result<ReadOptions<'_>, clangoffload_status> {
    let known = CLANGOFFLOAD_ALLOW_MISSING_BUNDLES
        | CLANGOFFLOAD_HIP_OPENMP
        | CLANGOFFLOAD_CHECK_INPUT_ARCHIVE
        | CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK
        | CLANGOFFLOAD_VERBOSE
        | CLANGOFFLOAD_NOTIFY_DONE_WITH;
    if options.flags & !known != 0 {
        return Err(clangoffload_status::InvalidArgument);
    }
    let text = |v: &clangoffload_bytes| {
        // SAFETY: readable, as the caller promises.
        let bytes = unsafe { v.as_slice() }?;
        core::str::from_utf8(bytes).map_err(|_| clangoffload_status::InvalidUtf8)
    };
    let file_type = text(&options.file_type)?;
    Ok(ReadOptions {
        file_type: (!file_type.is_empty()).then_some(file_type),
        // SAFETY: as above.
        targets: unsafe { strings(options.targets, options.target_count) }?,
        name: text(&options.input_name)?,
        flags: options.flags,
        decoding: Decoding {
            max_size: match options.max_decompressed_size {
                0 => Decoding::default().max_size,
                max => max,
            },
            verify_hash: options.flags & CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK == 0,
            verbose: options.flags & CLANGOFFLOAD_VERBOSE != 0,
        },
    })
}

/// The shell of every job that reads one input: checks the pointers, reads
/// the options, runs `job` with the caller's notes, and stores the job in
/// `*out` or reports its error (to `*err` and, whole, to `notify`).
///
/// # Safety
/// As the exported job functions: `data` readable for `len` bytes for the
/// job's life, `options` and its views readable, `out` writable, `err` NULL
/// or writable.
unsafe fn read_job<T: ReadHandle>(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut T,
    err: *mut clangoffload_error,
    job: impl FnOnce(&'static [u8], &ReadOptions<'_>, &mut Notifier) -> Result<T, BundlerError>,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable for the job's life, as the caller promises.
        let data: &'static [u8] = unsafe { slice_arg(data, len) }?;
        // SAFETY: readable, as the caller promises.
        let options = unsafe { handle_arg(options) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: the options' views are readable, as the caller promises.
        let read = unsafe { read_options(options) }?;
        let name = String::from_utf8_lossy(read.name.as_bytes()).into_owned();
        let mut notifier = Notifier::new(options.notify, options.context, name, options.flags);
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let mut made =
            job(data, &read, &mut notifier).map_err(|e| unsafe { fail(&e, &notifier, err) })?;
        for failure in made.failures() {
            let message = failure.message(&notifier.input_name);
            notifier.send(CLANGOFFLOAD_NOTE_FAILURE, &alloc::format!("{message}"));
        }
        made.set_input_name(notifier.input_name);
        *out = into_handle(made);
        Ok(())
    })
}

/// Reports a job's error: the record, and the whole message to `notify`.
///
/// # Safety
/// `err` must be NULL or writable.
unsafe fn fail(
    e: &BundlerError,
    notifier: &Notifier,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    notifier.error(e);
    // SAFETY: forwarded to the caller.
    unsafe { report_bundler(e, &notifier.input_name, err) }
}

/// `clangoffload_extraction_sink.next`: the next container to extract;
/// store its index in `*container` and return true, or return false when
/// none is left. Called whenever the stream can take one more.
pub type clangoffload_extraction_next_fn =
    Option<unsafe extern "C" fn(context: *mut c_void, container: *mut usize) -> bool>;

/// `clangoffload_extraction_sink.write`: the next `len` bytes of output
/// `output` (numbered across the input, as
/// `clangoffload_extraction_output_name` numbers them), at `offset` in it:
/// every output's bytes come in order, from its start, with no gap (an
/// output with no bytes gets no call: create its file when its container
/// is done). Return 0 to go on; anything else stops that output's
/// container (nothing more is said of it: no `done`).
pub type clangoffload_extraction_write_fn = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        output: usize,
        offset: u64,
        bytes: *const u8,
        len: usize,
    ) -> i32,
>;

/// `clangoffload_extraction_sink.done`: container `container` is extracted:
/// `status` is OK when every byte of its outputs was written and (unless
/// `CLANGOFFLOAD_BUNDLER_SKIP_HASH_CHECK`) its hash checked; otherwise
/// `*error` says why (its whole message went to `notify` just before, as
/// `CLANGOFFLOAD_NOTE_ERROR`), and what was written of its outputs is
/// incomplete or unverified: delete it. `error` is valid during the call
/// only.
pub type clangoffload_extraction_done_fn = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        container: usize,
        status: clangoffload_status,
        error: *const clangoffload_error,
    ),
>;

/// Where `clangoffload_extraction_stream` puts what it extracts: the
/// caller's callbacks, each called on the thread that called the stream,
/// with `context`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct clangoffload_extraction_sink {
    /// Hands out the next container.
    pub next: clangoffload_extraction_next_fn,
    /// Takes the next bytes of an output.
    pub write: clangoffload_extraction_write_fn,
    /// Hears that a container is done, or why not.
    pub done: clangoffload_extraction_done_fn,
    /// Passed to the callbacks.
    pub context: *mut c_void,
}

/// `clangoffload_extraction_stream_read_back`'s `read`: fill the `len`
/// bytes at `bytes` with output `output`'s bytes from `offset`, as
/// `write` was given them (all written before). Return 0 when filled;
/// anything else leaves the container's hash unchecked (its `done` says
/// so).
pub type clangoffload_extraction_read_fn = Option<
    unsafe extern "C" fn(
        context: *mut c_void,
        output: usize,
        offset: u64,
        bytes: *mut u8,
        len: usize,
    ) -> i32,
>;

/// The sink's callbacks, called as core's stream asks.
#[cfg(feature = "std")]
struct CallbackSink {
    sink: clangoffload_extraction_sink,
    /// Reads back what was written, if the caller can.
    read: clangoffload_extraction_read_fn,
    /// Where each output has got to.
    written: alloc::collections::BTreeMap<usize, u64>,
    /// Gets each failure's whole message (`CLANGOFFLOAD_NOTE_ERROR`).
    notifier: Notifier,
}

#[cfg(feature = "std")]
impl bundler::ExtractionSink for CallbackSink {
    fn next(&mut self) -> Option<usize> {
        let next = self.sink.next?;
        let mut container = 0usize;
        // SAFETY: the caller gave this callback and context for the call;
        // `container` is writable.
        unsafe { next(self.sink.context, &mut container) }.then_some(container)
    }

    fn write(&mut self, output: usize, bytes: &[u8]) -> core::ops::ControlFlow<()> {
        let Some(write) = self.sink.write else {
            return core::ops::ControlFlow::Break(());
        };
        let at = self.written.entry(output).or_insert(0);
        let offset = *at;
        *at = at.saturating_add(crate::ffi::len_u64(bytes.len()));
        // SAFETY: as above; the bytes are live during the call.
        match unsafe {
            write(
                self.sink.context,
                output,
                offset,
                bytes.as_ptr(),
                bytes.len(),
            )
        } {
            0 => core::ops::ControlFlow::Continue(()),
            _ => core::ops::ControlFlow::Break(()),
        }
    }

    fn done(&mut self, container: usize, result: Result<(), BundlerError>) {
        let Some(done) = self.sink.done else {
            return;
        };
        let mut record = clangoffload_error::new(clangoffload_status::Ok, 0, None, "");
        let status = match &result {
            Ok(()) => clangoffload_status::Ok,
            // SAFETY: `record` is writable.
            Err(e) => unsafe { fail(e, &self.notifier, &mut record) },
        };
        // SAFETY: as above; the record is live during the call.
        unsafe { done(self.sink.context, container, status, &record) }
    }

    fn reads_back(&self) -> bool {
        self.read.is_some()
    }

    fn read_back(&mut self, output: usize, offset: u64, bytes: &mut [u8]) -> bool {
        let Some(read) = self.read else {
            return false;
        };
        // SAFETY: as above; the bytes are writable during the call.
        unsafe {
            read(
                self.sink.context,
                output,
                offset,
                bytes.as_mut_ptr(),
                bytes.len(),
            ) == 0
        }
    }
}

/// Extracts the containers `sink->next` asks for, handing their outputs'
/// bytes to `sink->write` as they are decoded and saying when each
/// container is done: up to `lanes` compressed bundles (1 to 4) are
/// decoded side by side on the calling thread, a step of each in turn,
/// their hashes computed together (MD5 in SIMD lanes: 4 cost about what
/// 1.5 cost one after the other), and each is written as it is decoded.
/// Each bundle in flight is held whole until it ends (a zstd frame may
/// refer back to any byte it made), in a buffer the next one reuses:
/// memory is `lanes` times the largest bundle per calling thread. The
/// bytes are those `clangoffload_extraction_plan` plans.
/// Several threads may stream one extraction at once, each with its own
/// sink (each `next` handing out different containers): that is how the
/// `clangoffload` tool uses every core. Warnings go to `notify`. A caller
/// that can read back what it wrote does better with
/// `clangoffload_extraction_stream_read_back`.
///
/// Returns OK once `next` has no more (a container's failure is its
/// `done`), or an error for a bad argument.
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` and `sink` must not be NULL, nor `sink->next`,
/// `sink->write`, `sink->done`; `notify` may be NULL.
///
/// # Safety
/// `extraction` must be a live extraction (its input still readable);
/// `sink` readable, its callbacks callable with its context during the
/// call; `notify`, if set, callable with `context`.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_stream(
    extraction: *const clangoffload_extraction,
    lanes: usize,
    sink: *const clangoffload_extraction_sink,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe { stream(extraction, lanes, sink, None, notify, context) }
}

/// `clangoffload_extraction_stream` for a caller that can read back what
/// `sink->write` was given (files it wrote): each compressed bundle is
/// decoded alone on the calling thread, so that only one is held at a
/// time, and its hash is checked once it is decoded, from its outputs
/// read back through `read` (and the few bytes between them, kept), with
/// those of up to `lanes` (1 to 8; 8 fill AVX-512's 256-bit vectors, 4
/// SSE2's) bundles side by side in MD5's SIMD lanes. A container's `done` comes once its hash is checked: what it
/// wrote is unverified until then. Without hash checking
/// (`CLANGOFFLOAD_SKIP_HASH_CHECK`), `read` is never called. The same
/// outputs, bytes and errors as `clangoffload_extraction_stream`, in half
/// the memory or less, and faster (benches/README.md); an output that
/// cannot be read back leaves its container's hash unchecked: that
/// container's `done` is an error naming it.
///
/// Returns OK once `next` has no more (a container's failure is its
/// `done`), or an error for a bad argument.
///
/// Ownership: nothing to free.
///
/// NULL: `extraction`, `sink` and `read` must not be NULL, nor
/// `sink->next`, `sink->write`, `sink->done`; `notify` may be NULL.
///
/// # Safety
/// As `clangoffload_extraction_stream`; `read` callable with
/// `sink->context` during the call.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_stream_read_back(
    extraction: *const clangoffload_extraction,
    lanes: usize,
    sink: *const clangoffload_extraction_sink,
    read: clangoffload_extraction_read_fn,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
) -> clangoffload_status {
    if read.is_none() {
        return clangoffload_status::NullArgument;
    }
    // SAFETY: forwarded to the caller.
    unsafe { stream(extraction, lanes, sink, read, notify, context) }
}

/// Both streams: `read` set when the caller reads back.
///
/// # Safety
/// As the public functions say.
#[cfg(feature = "std")]
unsafe fn stream(
    extraction: *const clangoffload_extraction,
    lanes: usize,
    sink: *const clangoffload_extraction_sink,
    read: clangoffload_extraction_read_fn,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let extraction = unsafe { handle_arg(extraction) }?;
        // SAFETY: readable, as the caller promises.
        let sink = *unsafe { handle_arg(sink) }?;
        if sink.next.is_none() || sink.write.is_none() || sink.done.is_none() {
            return Err(clangoffload_status::NullArgument);
        }
        // Bundles decoded side by side: 4 at most; hashed side by side
        // from what is read back: 8.
        let most = if read.is_some() { 8 } else { 4 };
        if !(1..=most).contains(&lanes) {
            return Err(clangoffload_status::InvalidArgument);
        }
        let name = extraction.input_name.clone();
        let mut notifier = Notifier::new(notify, context, name.clone(), extraction.flags);
        let mut callbacks = CallbackSink {
            sink,
            read,
            written: alloc::collections::BTreeMap::new(),
            notifier: Notifier::new(notify, context, name, extraction.flags),
        };
        extraction
            .extraction
            .stream(lanes, &mut callbacks, &mut notifier);
        Ok(())
    })
}

/// Lists entry IDs as `clang-offload-bundler -list -type=<file_type>` does
/// (a repeated ID of a binary bundle once), or with an empty `file_type`
/// every ID of any file this library reads as bundles, repeats included,
/// with the archive member each is in. Read them with
/// `clangoffload_job_listed_count` / `_get_listed`.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong and where, and `options->notify` gets the
/// whole message.
///
/// Lifetime: the job borrows the `len` bytes at `data`: keep them alive and
/// unchanged until the job is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// Pointers as above; `notify`, if set, must be callable with `context`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_list(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe {
        read_job(data, len, options, out, err, |data, read, notifier| {
            let listed = match read.file_type {
                Some(file_type) => FileType::from_name(file_type)
                    .and_then(|t| bundler::list(data, t, read.decoding, notifier)),
                None => bundler::list_all(data, read.decoding, notifier),
            }?;
            Ok(clangoffload_job {
                plan: Plan::default(),
                listed,
                input_name: String::new(),
            })
        })
    }
}

/// Plans `clang-offload-bundler -unbundle -type=<file_type>
/// -targets=<targets>` of the `len` bytes at `data`: output `i` of the job
/// is what target `i` gets (the entry chosen by the bundler's rules, the
/// host fallback, or for `-type=a` an archive of the matching members).
/// When the job succeeds, check `clangoffload_job_failure` after writing its
/// outputs: LLVM writes the outputs it found before it reports missing
/// bundles. Entries are matched as LLVM 22's bundler reads them.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong and where, and `options->notify` gets the
/// whole message.
///
/// Lifetime: the job borrows the `len` bytes at `data`: keep them alive and
/// unchanged until the job is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_list`; the target views must be readable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_unbundle(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe {
        read_job(data, len, options, out, err, |data, read, notifier| {
            let flag = |bit| read.flags & bit != 0;
            let request = UnbundleRequest {
                file_type: FileType::from_name(read.file_type.unwrap_or_default())?,
                targets: &read.targets,
                allow_missing: flag(CLANGOFFLOAD_ALLOW_MISSING_BUNDLES),
                hip_openmp_compatible: flag(CLANGOFFLOAD_HIP_OPENMP),
                check_input_archive: flag(CLANGOFFLOAD_CHECK_INPUT_ARCHIVE),
                decoding: read.decoding,
            };
            let plan = bundler::unbundle(data, &request, notifier)?;
            Ok(clangoffload_job::from_plan(plan, String::new()))
        })
    }
}

/// `clang-offload-bundler -unbundle` in one call: plans as
/// `clangoffload_bundler_unbundle` does, writes output `i` to `paths[i]`
/// (`options->target_count` NUL-terminated paths; an output LLVM would not
/// write is not created), and returns the job's final status: OK, the
/// planning error, an I/O error, or the failure LLVM reports after writing
/// what it found (missing bundles).
///
/// Ownership: nothing to free; the files are the caller's.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `paths`
/// must not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_unbundle`; `paths` readable for
/// `options->target_count` NUL-terminated strings.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_unbundle_files(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    paths: *const *const c_char,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    let mut job = core::ptr::null_mut();
    // SAFETY: forwarded to the caller.
    let status = unsafe { clangoffload_bundler_unbundle(data, len, options, &mut job, err) };
    if status != clangoffload_status::Ok {
        return status;
    }
    // SAFETY: the job is live until freed below; `paths` as the caller promises.
    let status = unsafe { write_files(job, paths, err) };
    // SAFETY: the job came from above and is freed once.
    unsafe { clangoffload_job_free(job) };
    status
}

/// Writes each output of a live job to its path, then gives its failure.
///
/// # Safety
/// `job` live; `paths` readable for one NUL-terminated path per output.
#[cfg(feature = "std")]
unsafe fn write_files(
    job: *mut clangoffload_job,
    paths: *const *const c_char,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: the job is live, as the caller promises.
    let count = unsafe { clangoffload_job_output_count(job) };
    // SAFETY: readable for one path per output, as the caller promises.
    let paths = match unsafe { array_arg(paths, count) } {
        Ok(paths) => paths,
        Err(status) => return status,
    };
    // SAFETY: the job is live; `err` NULL or writable.
    let failure = unsafe { clangoffload_job_failure(job, err) };
    // SAFETY: the job is live.
    let plan = &unsafe { &*job }.plan;
    for (output, &path) in paths.iter().enumerate() {
        if !plan.writes(output) {
            continue;
        }
        // SAFETY: the job is live; the path NUL-terminated, as promised.
        let status = unsafe { clangoffload_job_write_path(job, output, path) };
        if status != clangoffload_status::Ok {
            return status;
        }
    }
    failure
}

/// Plans extracting every entry of every container in the `len` bytes at
/// `data`, in file order, repeats included: bundles and compressed bundles
/// (back to back, in ELF sections, in archive members) and every image of
/// every OffloadBinary (alone, in `.llvm.offloading`, in archives, nested
/// ones opened; each the bytes llvm-offload-binary writes for it). Output
/// `i` is named (`clangoffload_job_output_name`)
/// `<file name>[.<member>].<i>.<entry ID>` for a bundle entry and
/// `<file name>[.<member>].<i>.<triple>[-<arch>][.<ext>]` for an image, the
/// file name being `input_name` without its directory (`bundle` if empty),
/// every part made safe as a file name (only `[A-Za-z0-9._+:-]`, never
/// starting with `.`). A bundle whose payloads overlap so that extracting
/// them all would write more than it holds is refused
/// (`CLANGOFFLOAD_STATUS_EXTRACTION_TOO_LARGE`). Damage found after readable
/// containers is the job's failure (`clangoffload_job_failure`): write the
/// outputs, then report it. Only `options->flags`' `_SKIP_HASH_CHECK` and
/// `_VERBOSE` apply.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong and where, and `options->notify` gets the
/// whole message.
///
/// Lifetime: the job borrows the `len` bytes at `data`: keep them alive and
/// unchanged until the job is freed.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_list`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_extract(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe {
        read_job(data, len, options, out, err, |data, read, notifier| {
            // Outputs are named after the input's file name, without its
            // directory.
            let plan = bundler::extract(data, stem(read.name), read.decoding, notifier)?;
            Ok(clangoffload_job::from_plan(plan, String::new()))
        })
    }
}

/// Outputs are named after the input's file name, without its directory
/// (`bundle` if it has none).
fn stem(name: &str) -> &[u8] {
    name.rsplit(['/', '\\'])
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("bundle")
        .as_bytes()
}

/// Every container of one input, found and named, each decoded and planned
/// on demand by `clangoffload_extraction_plan`: extraction that holds one
/// container at a time (or one per thread).
pub struct clangoffload_extraction {
    extraction: Extraction<'static>,
    /// For the failure's message and the jobs' notes.
    input_name: String,
    /// The options' flags (`_VERBOSE`), for the jobs' notes.
    flags: u32,
}

impl ReadHandle for clangoffload_extraction {
    fn failures(&self) -> &[BundlerError] {
        self.extraction.failures()
    }

    fn set_input_name(&mut self, name: String) {
        self.input_name = name;
    }
}

/// A container of an extraction: where it is and which outputs it gives.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct clangoffload_extraction_container {
    /// Its offset in the input.
    pub offset: u64,
    /// How many bytes of the input it takes (a caller that mapped the input
    /// may release them once the container is written).
    pub size: u64,
    /// The index of its first output (outputs are numbered across the whole
    /// input).
    pub first_output: usize,
    /// How many outputs it gives.
    pub output_count: usize,
}

/// Finds every container `clangoffload_bundler_extract` extracts from the
/// `len` bytes at `data` and names every output the same way, decoding a
/// compressed bundle only as far as its entry table; nothing is decoded
/// whole. Then `clangoffload_extraction_plan` decodes one container and
/// plans its outputs: a caller holds one container at a time, or one per
/// thread. Damage that leaves other containers readable is reported, each
/// piece of it (one `CLANGOFFLOAD_NOTE_FAILURE` each to `options->notify`
/// now, in file order): write what can be read, then report them. Only `options->flags`'
/// `_SKIP_HASH_CHECK` and `_VERBOSE` apply (to the plans).
///
/// Ownership: on success `*out` is a new extraction owned by the caller,
/// released with `clangoffload_extraction_free`. On failure `*out` is
/// untouched, `*err` (if not NULL) says what is wrong and where, and
/// `options->notify` gets the whole message.
///
/// Lifetime: the extraction, and every job planned from it, borrows the
/// `len` bytes at `data`: keep them alive and unchanged until those are
/// freed. `options` is read during the call only.
///
/// NULL: `data` may be NULL only when `len` is 0; `options` and `out` must
/// not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_list`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_extraction(
    data: *const u8,
    len: usize,
    options: *const clangoffload_bundler_options,
    out: *mut *mut clangoffload_extraction,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    // SAFETY: forwarded to the caller.
    unsafe {
        read_job(data, len, options, out, err, |data, read, notifier| {
            let extraction = Extraction::new(data, stem(read.name), read.decoding, notifier)?;
            Ok(clangoffload_extraction {
                extraction,
                input_name: String::new(),
                flags: read.flags,
            })
        })
    }
}

/// Sets the bytes `clangoffload_extraction_stream` may hold at once for
/// decoding compressed bundles, across every thread that streams
/// `extraction`: each bundle is admitted by its declared decoded size (its
/// buffer: that and an eighth), and one that does not fit waits for others
/// to end; one larger than the whole budget is decoded alone. 0 sets the
/// default: 256 MiB, or the largest single bundle's buffer when that is
/// more (what `clangoffload_bundler_extraction` sets). Call it before
/// streaming, not while a stream runs.
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` NULL gives `CLANGOFFLOAD_STATUS_NULL_ARGUMENT`.
///
/// # Safety
/// `extraction` must be NULL or a live extraction that no other thread uses
/// during the call.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_set_memory_budget(
    extraction: *mut clangoffload_extraction,
    bytes: u64,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: NULL or live and not shared during the call, as promised.
        let extraction = unsafe { extraction.as_mut() }.ok_or(clangoffload_status::NullArgument)?;
        extraction
            .extraction
            .set_memory_budget((bytes != 0).then_some(bytes));
        Ok(())
    })
}

/// The bytes `clangoffload_extraction_stream` may hold at once for decoding
/// (see `clangoffload_extraction_set_memory_budget`; 0 for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` may be NULL.
///
/// # Safety
/// `extraction` must be NULL or a live extraction.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_memory_budget(
    extraction: *const clangoffload_extraction,
) -> u64 {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { extraction.as_ref() }.map_or(0, |e| e.extraction.memory_budget())
}

/// How many containers an extraction found (0 for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` may be NULL.
///
/// # Safety
/// `extraction` must be NULL or a live extraction.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_container_count(
    extraction: *const clangoffload_extraction,
) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { extraction.as_ref() }.map_or(0, |e| e.extraction.container_count())
}

/// How many outputs all of an extraction's containers give (0 for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `extraction` may be NULL.
///
/// # Safety
/// `extraction` must be NULL or a live extraction.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_output_count(
    extraction: *const clangoffload_extraction,
) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { extraction.as_ref() }.map_or(0, |e| e.extraction.output_count())
}

/// Stores in `*out` where container `index` is and which outputs it gives.
///
/// Ownership: the record is copied into `*out`; nothing to free.
///
/// NULL: `extraction` and `out` must not be NULL.
///
/// # Safety
/// `extraction` must be a live extraction; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_get_container(
    extraction: *const clangoffload_extraction,
    index: usize,
    out: *mut clangoffload_extraction_container,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let extraction = unsafe { handle_arg(extraction) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let container = extraction
            .extraction
            .container(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        *out = clangoffload_extraction_container {
            offset: container.offset,
            size: container.size,
            first_output: container.outputs.start,
            output_count: container.outputs.len(),
        };
        Ok(())
    })
}

/// Stores in `*out` the name of output `output` (numbered across the whole
/// input): the name `clangoffload_bundler_extract` gives it, and the job
/// `clangoffload_extraction_plan` makes gives it again.
///
/// Ownership: nothing to free.
///
/// Lifetime: the view borrows the extraction, until
/// `clangoffload_extraction_free`.
///
/// NULL: `extraction` and `out` must not be NULL.
///
/// # Safety
/// `extraction` must be a live extraction; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_output_name(
    extraction: *const clangoffload_extraction,
    output: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let extraction = unsafe { handle_arg(extraction) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        if output >= extraction.extraction.output_count() {
            return Err(clangoffload_status::IndexOutOfRange);
        }
        *out = clangoffload_bytes::of(extraction.extraction.output_name(output));
        Ok(())
    })
}

/// Decodes container `index` of an extraction (a compressed bundle whole,
/// its hash checked unless the extraction's options had
/// `_SKIP_HASH_CHECK`) and plans its outputs as a job: output `i` of the job
/// is output `first_output + i` of the input, with the same name. The job
/// holds that container's decoded bytes and nothing else; free it once its
/// outputs are written, and a caller holds one container at a time.
/// Warnings and `-verbose` reports for this container go to `notify`.
///
/// Threads: calls for one extraction may run at once on several threads
/// (the extraction is only read), each with its own `notify` and `context`:
/// decode containers in parallel, write them in order.
///
/// Ownership: on success `*out` is a new job owned by the caller, released
/// with `clangoffload_job_free`. On failure `*out` is untouched, `*err` (if
/// not NULL) says what is wrong and where, and `notify` gets the whole
/// message: none of this container's outputs can be written, and the others
/// are not affected.
///
/// Lifetime: the job borrows the extraction's input (not the extraction).
///
/// NULL: `extraction` and `out` must not be NULL; `notify` and `err` may be
/// NULL.
///
/// # Safety
/// `extraction` must be a live extraction; `out` writable; `err` NULL or
/// writable; `notify`, if set, callable with `context` during the call.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_plan(
    extraction: *const clangoffload_extraction,
    index: usize,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let extraction = unsafe { handle_arg(extraction) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        if index >= extraction.extraction.container_count() {
            return Err(clangoffload_status::IndexOutOfRange);
        }
        let name = extraction.input_name.clone();
        let mut notifier = Notifier::new(notify, context, name, extraction.flags);
        let plan = extraction
            .extraction
            .plan(index, &mut notifier)
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { fail(&e, &notifier, err) })?;
        *out = into_handle(clangoffload_job::from_plan(plan, notifier.input_name));
        Ok(())
    })
}

/// Releases an extraction. NULL is accepted and ignored. Jobs planned from
/// it stay valid.
///
/// Ownership: takes the extraction back; it must not be used again.
///
/// NULL: `extraction` may be NULL.
///
/// # Safety
/// `extraction` must be NULL or a live extraction not yet freed, with no
/// call on it running.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_extraction_free(extraction: *mut clangoffload_extraction) {
    // SAFETY: NULL or a live extraction, as the caller promises.
    unsafe { free_handle(extraction) }
}

/// Plans the file `clang-offload-bundler -type=<file_type> -targets=...
/// -inputs=...` writes: output 0 of the job. With `-type=o` and a host input
/// that is an object file, the object with one section per target; else a
/// text bundle for text types or a binary bundle (payloads are views of the
/// inputs, not copies), compressed if asked.
///
/// Ownership: as `clangoffload_bundler_list`.
///
/// Lifetime: the job borrows every input: keep them alive and unchanged
/// until the job is freed.
///
/// NULL: `request`, `out` must not be NULL; `err` may be NULL.
///
/// # Safety
/// As `clangoffload_bundler_list`; every view in `request` readable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_bundle(
    request: *const clangoffload_bundle_request,
    out: *mut *mut clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable, as the caller promises.
        let request = unsafe { handle_arg(request) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        // SAFETY: the request's views are readable, as the caller promises.
        let (file_type, name) = unsafe {
            (
                request.file_type.as_slice()?,
                request.input_name.as_slice()?,
            )
        };
        let file_type =
            core::str::from_utf8(file_type).map_err(|_| clangoffload_status::InvalidUtf8)?;
        // SAFETY: as above.
        let targets = unsafe { strings(request.targets, request.count) }?;
        // SAFETY: as above; the inputs outlive the job, as the caller promises.
        let inputs: Vec<&'static [u8]> = unsafe { array_arg(request.inputs, request.count) }?
            .iter()
            // SAFETY: as above.
            .map(|v| unsafe { v.as_slice() })
            .collect::<Result<_, _>>()?;
        if request.flags & !CLANGOFFLOAD_VERBOSE != 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        let method = match request.compression_method {
            crate::CLANGOFFLOAD_COMPRESSION_ZLIB => CompressionMethod::Zlib,
            crate::CLANGOFFLOAD_COMPRESSION_ZSTD => CompressionMethod::Zstd,
            _ if !request.compress => CompressionMethod::Zstd,
            _ => return Err(clangoffload_status::InvalidArgument),
        };
        let compression = request.compress.then_some(Compression {
            method,
            version: request.compression_version,
            level: request
                .has_compression_level
                .then_some(request.compression_level),
        });
        let mut notifier = Notifier::new(
            request.notify,
            request.context,
            String::from_utf8_lossy(name).into_owned(),
            request.flags,
        );
        let plan = FileType::from_name(file_type).and_then(|file_type| {
            let request = BundleRequest {
                file_type,
                targets: &targets,
                inputs: &inputs,
                align: request.align,
                compression,
            };
            bundler::bundle(&request, &mut notifier)
        });
        // SAFETY: `err` is NULL or writable, as the caller promises.
        let plan = plan.map_err(|e| unsafe { fail(&e, &notifier, err) })?;
        *out = into_handle(clangoffload_job {
            plan,
            listed: Listed::default(),
            input_name: notifier.input_name,
        });
        Ok(())
    })
}

/// Checks `-targets` as clang-offload-bundler 22 does before it opens a
/// file, in its order: duplicates, the `<kind>-<triple>` format, known kinds
/// and triples, conflicting target IDs, the number of host targets (exactly
/// one when bundling, unless every target is HIP; at most one when
/// unbundling: `unbundle` true).
///
/// Ownership: nothing to free. On failure `*err` (if not NULL) and `notify`
/// (if set) get the message.
///
/// NULL: `targets` may be NULL only when `count` is 0; `err` may be NULL.
///
/// # Safety
/// `targets` readable for `count` views, each readable; `notify`, if set,
/// callable with `context`.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_bundler_check_targets(
    targets: *const clangoffload_bytes,
    count: usize,
    unbundle: bool,
    notify: clangoffload_notify_fn,
    context: *mut c_void,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: readable, as the caller promises.
        let targets = unsafe { strings(targets, count) }?;
        let mode = if unbundle {
            bundler::Mode::Unbundle
        } else {
            bundler::Mode::Bundle
        };
        let notifier = Notifier::new(notify, context, String::new(), 0);
        bundler::check_targets(&targets, mode)
            .map(drop)
            // SAFETY: `err` is NULL or writable, as the caller promises.
            .map_err(|e| unsafe { fail(&e, &notifier, err) })
    })
}

/// How many outputs a job has (0 for a listing, or for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `job` may be NULL.
///
/// # Safety
/// `job` must be NULL or a live job.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_output_count(job: *const clangoffload_job) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { job.as_ref() }.map_or(0, |job| job.plan.output_count())
}

/// How many pieces output `output` has (0 past the end, or for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `job` may be NULL.
///
/// # Safety
/// `job` must be NULL or a live job.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_piece_count(
    job: *const clangoffload_job,
    output: usize,
) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { job.as_ref() }.map_or(0, |job| job.plan.output(output).len())
}

/// Stores piece `index` of output `output` in `*out`.
///
/// Ownership: nothing to free.
///
/// Lifetime: `Input` views borrow the caller's input; `Made` views borrow
/// the job, until `clangoffload_job_free`.
///
/// NULL: `job` and `out` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_get_piece(
    job: *const clangoffload_job,
    output: usize,
    index: usize,
    out: *mut clangoffload_piece,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        let piece = job
            .plan
            .output(output)
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        let bytes = clangoffload_bytes::of(job.plan.bytes(piece).unwrap_or_default());
        *out = match piece {
            Piece::Input { input, offset, .. } => clangoffload_piece {
                kind: clangoffload_piece_kind::Input,
                input: *input,
                input_offset: *offset,
                bytes,
                zeros: 0,
            },
            Piece::Made { .. } => clangoffload_piece {
                kind: clangoffload_piece_kind::Made,
                input: 0,
                input_offset: 0,
                bytes,
                zeros: 0,
            },
            Piece::Zeros(n) => clangoffload_piece {
                kind: clangoffload_piece_kind::Zeros,
                input: 0,
                input_offset: 0,
                bytes,
                zeros: *n,
            },
        };
        Ok(())
    })
}

/// Stores in `*out` the name the job chose for output `output` (an
/// extraction's file names; empty for other jobs).
///
/// Ownership: nothing to free.
///
/// Lifetime: the view borrows the job, until `clangoffload_job_free`.
///
/// NULL: `job` and `out` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_output_name(
    job: *const clangoffload_job,
    output: usize,
    out: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        if output >= job.plan.output_count() {
            return Err(clangoffload_status::IndexOutOfRange);
        }
        *out = clangoffload_bytes::of(job.plan.output_name(output));
        Ok(())
    })
}

/// Stores in `*out` what output `output` is: its name, size, and whether to
/// write it.
///
/// Ownership: nothing to free.
///
/// Lifetime: the name borrows the job, until `clangoffload_job_free`.
///
/// NULL: `job` and `out` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_get_output(
    job: *const clangoffload_job,
    output: usize,
    out: *mut clangoffload_job_output,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        // SAFETY: writable, as the caller promises.
        let out = unsafe { out_arg(out) }?;
        if output >= job.plan.output_count() {
            return Err(clangoffload_status::IndexOutOfRange);
        }
        *out = clangoffload_job_output {
            name: clangoffload_bytes::of(job.plan.output_name(output)),
            size: job.plan.output_size(output),
            written: job.plan.writes(output),
        };
        Ok(())
    })
}

/// The error to report once the outputs are written (LLVM writes the
/// outputs it found, then fails): `CLANGOFFLOAD_STATUS_OK` if none; else its
/// status, with `*err` (if not NULL) filled. When there is one, write only
/// the outputs `clangoffload_job_get_output` marks `written`.
/// `clangoffload_job_failure_message` gives the whole message (and the
/// job's `notify` got it as `CLANGOFFLOAD_NOTE_FAILURE`).
///
/// Ownership: nothing to free.
///
/// NULL: `job` must not be NULL; `err` may be.
///
/// # Safety
/// `job` must be a live job; `err` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_failure(
    job: *const clangoffload_job,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        match job.plan.failure() {
            // SAFETY: NULL or writable, as the caller promises.
            Some(e) => Err(unsafe { report_bundler(e, &job.input_name, err) }),
            None => Ok(()),
        }
    })
}

/// Writes the whole message of the job's failure (see
/// `clangoffload_job_failure`; empty if none) into `buf` as a NUL-terminated
/// string and its length (without the NUL) in `*out_len`; if `cap` is too
/// small, stores the length and returns `CLANGOFFLOAD_STATUS_BUFFER_TOO_SMALL`.
///
/// Ownership: nothing to free.
///
/// NULL: `job`, `out_len` must not be NULL;
/// `buf` may be NULL only with `cap` 0.
///
/// # Safety
/// `job` must be a live job; `buf` writable for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_failure_message(
    job: *const clangoffload_job,
    buf: *mut c_char,
    cap: usize,
    out_len: *mut usize,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        let message = job
            .plan
            .failure()
            .map(|e| alloc::format!("{}", e.message(&job.input_name)))
            .unwrap_or_default();
        // SAFETY: buffers as the caller promises.
        unsafe { write_display(&message, buf, cap, out_len) }
    })
}

/// How many IDs a listing job holds (0 for other jobs, or for NULL).
///
/// Ownership: nothing to free.
///
/// NULL: `job` may be NULL.
///
/// # Safety
/// `job` must be NULL or a live job.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_listed_count(job: *const clangoffload_job) -> usize {
    // SAFETY: NULL or live, as the caller promises.
    unsafe { job.as_ref() }.map_or(0, |job| job.listed.len())
}

/// Stores listed ID `index` in `*id` and the archive member it is in (empty
/// if none) in `*member`.
///
/// Ownership: nothing to free.
///
/// Lifetime: the views borrow the input or the job, until
/// `clangoffload_job_free`.
///
/// NULL: no argument may be NULL.
///
/// # Safety
/// `job` must be a live job; `member` and `id` writable.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_get_listed(
    job: *const clangoffload_job,
    index: usize,
    member: *mut clangoffload_bytes,
    id: *mut clangoffload_bytes,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        // SAFETY: writable, as the caller promises.
        let (member, id) = unsafe { (out_arg(member)?, out_arg(id)?) };
        let (in_member, listed) = job
            .listed
            .get(index)
            .ok_or(clangoffload_status::IndexOutOfRange)?;
        *member = clangoffload_bytes::of(in_member.unwrap_or_default());
        *id = clangoffload_bytes::of(listed);
        Ok(())
    })
}

/// Writes output `output` to the open file descriptor `fd` (from its
/// current position; the descriptor stays open), from memory: what
/// `clangoffload_job_write_fd_from` does with no input descriptors.
///
/// Ownership: nothing to free; `fd` stays the caller's.
///
/// NULL: `job` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `fd` an open descriptor the caller may write.
#[cfg(all(feature = "std", unix))]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_write_fd(
    job: *const clangoffload_job,
    output: usize,
    fd: core::ffi::c_int,
) -> clangoffload_status {
    // SAFETY: as the caller promises; no input descriptors, no record.
    unsafe {
        clangoffload_job_write_fd_from(job, output, fd, core::ptr::null(), 0, core::ptr::null_mut())
    }
}

/// Writes output `output` to the open file descriptor `fd` (from its
/// current position; the descriptor stays open). Where `input_fds` (NULL,
/// or `input_count` descriptors, -1 for none) holds input `i` open for
/// reading, that input's bytes are copied file to file in the kernel
/// (`copy_file_range` where the system has it) instead of from memory; that
/// descriptor's file position moves. The descriptors must be of the very
/// bytes the job was made from.
///
/// Ownership: nothing to free; the descriptors stay the caller's.
///
/// NULL: `job` must not be NULL; `input_fds` may be NULL only when
/// `input_count` is 0; `err` may be NULL.
///
/// Errors: `CLANGOFFLOAD_STATUS_IO_ERROR` with the system's message in
/// `*err` when writing or reading fails.
///
/// # Safety
/// `job` must be a live job; `fd` an open descriptor the caller may write;
/// `input_fds` readable for `input_count` descriptors.
#[cfg(all(feature = "std", unix))]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_write_fd_from(
    job: *const clangoffload_job,
    output: usize,
    fd: core::ffi::c_int,
    input_fds: *const core::ffi::c_int,
    input_count: usize,
    err: *mut clangoffload_error,
) -> clangoffload_status {
    use std::mem::ManuallyDrop;
    use std::os::fd::FromRawFd;
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        // SAFETY: readable, as the caller promises.
        let input_fds = unsafe { array_arg(input_fds, input_count) }?;
        if fd < 0 {
            return Err(clangoffload_status::InvalidArgument);
        }
        // SAFETY: open descriptors the caller lends for the call; they are
        // never closed (ManuallyDrop).
        let open = |fd| ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        let inputs: Vec<_> = input_fds
            .iter()
            .map(|&fd| (fd >= 0).then(|| open(fd)))
            .collect();
        let inputs: Vec<Option<&std::fs::File>> = inputs.iter().map(|f| f.as_deref()).collect();
        // SAFETY: NULL or writable, as the caller promises.
        write_output(&job.plan, output, &open(fd), &inputs)
            .map_err(|e| unsafe { io_error(&e, err) })
    })
}

/// Creates (or truncates) the file at `path` (NUL-terminated) and writes
/// output `output` to it.
///
/// Ownership: nothing to free.
///
/// NULL: `job`, `path` must not be NULL.
///
/// # Safety
/// `job` must be a live job; `path` a NUL-terminated string.
#[cfg(feature = "std")]
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_write_path(
    job: *const clangoffload_job,
    output: usize,
    path: *const c_char,
) -> clangoffload_status {
    ffi_guard!({
        // SAFETY: live, as the caller promises.
        let job = unsafe { handle_arg(job) }?;
        if path.is_null() {
            return Err(clangoffload_status::NullArgument);
        }
        // SAFETY: NUL-terminated, as the caller promises.
        let path = unsafe { core::ffi::CStr::from_ptr(path) };
        let path = path
            .to_str()
            .map_err(|_| clangoffload_status::InvalidUtf8)?;
        let file = std::fs::File::create(path).map_err(|_| clangoffload_status::IoError)?;
        write_output(&job.plan, output, &file, &[]).map_err(|_| clangoffload_status::IoError)
    })
}

/// Writes output `output` to `out`, copying input `i`'s bytes from
/// `inputs[i]` where it is given.
#[cfg(feature = "std")]
fn write_output(
    plan: &Plan<'_>,
    output: usize,
    mut out: &std::fs::File,
    inputs: &[Option<&std::fs::File>],
) -> std::io::Result<()> {
    use std::io::{Read, Seek, Write};
    const ZEROS: [u8; 4096] = [0; 4096];
    for piece in plan.output(output) {
        match (piece, plan.bytes(piece)) {
            (
                Piece::Input {
                    input,
                    offset,
                    bytes,
                },
                _,
            ) if inputs.get(*input).is_some_and(Option::is_some) => {
                let mut from = inputs
                    .get(*input)
                    .copied()
                    .flatten()
                    .ok_or(std::io::ErrorKind::NotFound)?;
                from.seek(std::io::SeekFrom::Start(*offset))?;
                let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
                if std::io::copy(&mut from.take(len), &mut out)? != len {
                    return Err(std::io::ErrorKind::UnexpectedEof.into());
                }
            }
            (_, Some(bytes)) => out.write_all(bytes)?,
            (Piece::Zeros(mut n), None) => {
                while n > 0 {
                    let chunk = usize::try_from(n).unwrap_or(ZEROS.len()).min(ZEROS.len());
                    out.write_all(ZEROS.get(..chunk).unwrap_or_default())?;
                    n = n.saturating_sub(u64::try_from(chunk).unwrap_or(n));
                }
            }
            _ => {}
        }
    }
    out.flush()
}

/// Reports an I/O error: its status, with the system's message (without
/// Rust's " (os error N)") in the caller's optional record.
///
/// # Safety
/// `err` must be NULL or writable.
#[cfg(feature = "std")]
unsafe fn io_error(e: &std::io::Error, err: *mut clangoffload_error) -> clangoffload_status {
    let text = alloc::string::ToString::to_string(e);
    let text = text.find(" (os error").map_or(&*text, |end| &text[..end]);
    let record = || clangoffload_error::new(clangoffload_status::IoError, 0, None, text);
    // SAFETY: NULL or writable, as the caller promises.
    unsafe { clangoffload_error::store(err, record) };
    clangoffload_status::IoError
}

/// Releases a job. NULL is accepted and ignored.
///
/// Ownership: takes the job back; it must not be used again.
///
/// NULL: `job` may be NULL.
///
/// # Safety
/// `job` must be NULL or a live job not yet freed.
#[no_mangle]
pub unsafe extern "C" fn clangoffload_job_free(job: *mut clangoffload_job) {
    // SAFETY: NULL or a live job, as the caller promises.
    unsafe { free_handle(job) }
}
