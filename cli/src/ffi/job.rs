//! The bundler's jobs through the C ABI (`clangoffload_bundler_*`,
//! `clangoffload_job_*`): a safe layer that turns views into slices and
//! notes into stderr lines. Every rule is the library's.

use std::ffi::c_int;
use std::fs::File;
use std::os::fd::AsRawFd;

use super::{blank_error, c, check, record, view, with_notes, with_notes_on};
use super::{Handle, Status};
use crate::io::Input;

/// A C function that reads one input into a new handle of type `T` (a
/// job, an extraction).
type ReadJob<T> = unsafe extern "C" fn(
    *const u8,
    usize,
    *const c::clangoffload_bundler_options,
    *mut *mut T,
    *mut c::clangoffload_error,
) -> Status;

/// Runs `call` over `input` with `o`, letting go of the pages of each part
/// of the input the library is done with: the handle it makes (freed by
/// `free`), and the failure to report once its outputs are written.
fn read_handle<'data, T>(
    program: &str,
    input: &'data Input,
    o: &Options,
    call: ReadJob<T>,
    free: unsafe extern "C" fn(*mut T),
) -> Result<(Handle<'data, T>, Vec<String>), String> {
    let data = input.data();
    let mut failures = Vec::new();
    let handle = Handle::make(free, |out| {
        failures = with_notes_on(program, input, |notify, context| {
            read_input(
                o,
                c::CLANGOFFLOAD_NOTIFY_DONE_WITH,
                notify,
                context,
                |options| {
                    // SAFETY: data, the options and their views are live for
                    // the call, and data for the handle ('data).
                    unsafe {
                        call(
                            data.as_ptr(),
                            data.len(),
                            options,
                            out,
                            std::ptr::null_mut(),
                        )
                    }
                },
            )
        })?;
        Ok(())
    })?;
    Ok((handle, failures))
}

/// A job's result, borrowing its inputs, with the failure to report once
/// its outputs are written.
pub struct Job<'data> {
    handle: Handle<'data, c::clangoffload_job>,
    failure: Option<String>,
}

/// An output of a job.
pub struct Output<'a> {
    /// The name the job chose (extracting), else empty.
    pub name: &'a [u8],
    /// Whether LLVM writes it.
    pub written: bool,
}

/// How a job reads its input.
pub struct Options<'a> {
    pub file_type: &'a str,
    pub targets: &'a [&'a str],
    pub flags: u32,
    pub max_size: u64,
    pub input_name: &'a str,
}

impl<'data> Job<'data> {
    /// Runs a call that makes a job, with a notes sink.
    pub(super) fn make(
        program: &str,
        call: impl FnOnce(
            c::clangoffload_notify_fn,
            *mut std::ffi::c_void,
            &mut *mut c::clangoffload_job,
        ) -> Status,
    ) -> Result<Self, String> {
        let mut failures = Vec::new();
        let handle = Handle::make(c::clangoffload_job_free, |out| {
            failures = with_notes(program, |notify, context| call(notify, context, out))?;
            Ok(())
        })?;
        // A job reports one failure.
        let failure = failures.into_iter().next();
        Ok(Job { handle, failure })
    }

    /// `-unbundle` of `input`.
    pub fn unbundle(program: &str, input: &'data Input, o: &Options) -> Result<Self, String> {
        Self::read(program, input, o, c::clangoffload_bundler_unbundle)
    }

    /// `-list` of `input` (an empty file type: every ID of any file).
    pub fn list(program: &str, input: &'data Input, o: &Options) -> Result<Self, String> {
        Self::read(program, input, o, c::clangoffload_bundler_list)
    }

    /// Runs a job that reads `input` with `o`.
    fn read(
        program: &str,
        input: &'data Input,
        o: &Options,
        job: ReadJob<c::clangoffload_job>,
    ) -> Result<Self, String> {
        let (handle, failures) = read_handle(program, input, o, job, c::clangoffload_job_free)?;
        // A job reports one failure.
        let failure = failures.into_iter().next();
        Ok(Job { handle, failure })
    }

    /// Bundling `inputs` for `o.targets`.
    pub fn bundle(
        program: &str,
        inputs: &[&'data [u8]],
        o: &Options,
        align: u64,
        compression: Option<(u32, u16, Option<i32>)>,
    ) -> Result<Self, String> {
        let targets: Vec<_> = o.targets.iter().map(|t| view(t.as_bytes())).collect();
        let inputs: Vec<_> = inputs.iter().map(|i| view(i)).collect();
        let (method, version, level) = compression.unwrap_or((0, 3, None));
        Self::make(program, |notify, context, out| {
            let request = c::clangoffload_bundle_request {
                file_type: view(o.file_type.as_bytes()),
                targets: targets.as_ptr(),
                inputs: inputs.as_ptr(),
                count: targets.len().min(inputs.len()),
                align,
                compress: compression.is_some(),
                compression_method: method,
                compression_version: version,
                compression_level: level.unwrap_or(0),
                has_compression_level: level.is_some(),
                flags: o.flags,
                input_name: view(o.input_name.as_bytes()),
                notify,
                context,
            };
            // SAFETY: the request and its views are live for the call, the
            // inputs for the job ('data).
            unsafe { c::clangoffload_bundler_bundle(&request, out, std::ptr::null_mut()) }
        })
    }

    /// Every output: its name (empty unless the job chose one) and whether
    /// it is written.
    pub fn outputs(&self) -> Vec<Output<'_>> {
        let job = &self.handle;
        job.list(
            c::clangoffload_job_output_count,
            c::clangoffload_job_get_output,
        )
        .into_iter()
        .map(|o| Output {
            name: job.bytes(o.name),
            written: o.written,
        })
        .collect()
    }

    /// Writes output `output` to `out`, file to file from the inputs that
    /// are files (the job's inputs, in order).
    pub fn write(&self, output: usize, out: &File, inputs: &[&Input]) -> Result<(), String> {
        let fds: Vec<c_int> = inputs.iter().map(|i| i.fd().unwrap_or(-1)).collect();
        self.write_from(output, out, &fds)
    }

    /// Writes output `output` to `out`, copying input bytes file to file
    /// from `fds` (the job's inputs' descriptors, in order; -1 for one that
    /// is not a file). Each thread writing at once needs descriptors of its
    /// own: copying moves a descriptor's file offset.
    pub fn write_from(&self, output: usize, out: &File, fds: &[c_int]) -> Result<(), String> {
        let mut err = blank_error();
        // SAFETY: the job is live; the descriptors are open for the call.
        let status = unsafe {
            c::clangoffload_job_write_fd_from(
                self.handle.ptr(),
                output,
                out.as_raw_fd(),
                fds.as_ptr(),
                fds.len(),
                &mut err,
            )
        };
        check(status, &err)
    }

    /// The error to report once the outputs are written, in full.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// The listed (member, ID) pairs.
    pub fn listed(&self) -> Vec<(&[u8], &[u8])> {
        let job = &self.handle;
        let (mut member, mut id) = (view(&[]), view(&[]));
        let mut listed = Vec::new();
        // SAFETY: the job's handle is live while `self` is.
        let count = unsafe { c::clangoffload_job_listed_count(job.ptr()) };
        for i in 0..count {
            // SAFETY: the job's handle is live, `i` below its count, and
            // `member` and `id` are writable views.
            let status =
                unsafe { c::clangoffload_job_get_listed(job.ptr(), i, &mut member, &mut id) };
            if status == Status::Ok {
                listed.push((member, id));
            }
        }
        listed
            .into_iter()
            .map(|(member, id)| (job.bytes(member), job.bytes(id)))
            .collect()
    }
}

/// Calls `call` with the C options for reading an input as `o` says, and
/// `flags` besides.
fn read_input(
    o: &Options,
    flags: u32,
    notify: c::clangoffload_notify_fn,
    context: *mut std::ffi::c_void,
    call: impl FnOnce(&c::clangoffload_bundler_options) -> Status,
) -> Status {
    let targets: Vec<_> = o.targets.iter().map(|t| view(t.as_bytes())).collect();
    let options = c::clangoffload_bundler_options {
        file_type: view(o.file_type.as_bytes()),
        targets: targets.as_ptr(),
        target_count: targets.len(),
        flags: o.flags | flags,
        max_decompressed_size: o.max_size,
        input_name: view(o.input_name.as_bytes()),
        notify,
        context,
    };
    call(&options)
}

/// Every container of an input found and every output named
/// (`clangoffload_bundler_extraction`); each container decoded and planned
/// on demand, on any thread.
pub struct Extraction<'data> {
    handle: Handle<'data, c::clangoffload_extraction>,
    failures: Vec<String>,
}

// SAFETY: the library only reads an extraction in
// `clangoffload_extraction_plan` and the getters, and documents that plans
// of one extraction may be made on several threads at once; it is freed
// once, when this is dropped, which the borrow checker keeps after every
// thread that shares it has ended.
unsafe impl Sync for Extraction<'_> {}

impl<'data> Extraction<'data> {
    /// Finds and names what `extract` writes from `input` (letting go of
    /// the pages of each container once its entry table is read).
    pub fn new(program: &str, input: &'data Input, o: &Options) -> Result<Self, String> {
        let (handle, failures) = read_handle(
            program,
            input,
            o,
            c::clangoffload_bundler_extraction,
            c::clangoffload_extraction_free,
        )?;
        Ok(Extraction { handle, failures })
    }

    /// Every output's name, numbered across the input.
    pub fn output_names(&self) -> Vec<&[u8]> {
        let e = self.handle.ptr();
        // SAFETY: the extraction is live.
        let count = unsafe { c::clangoffload_extraction_output_count(e) };
        (0..count)
            .map(|i| {
                let mut name = view(&[]);
                // SAFETY: live; `name` writable; on OK it views the
                // extraction, which outlives the returned slices.
                let status = unsafe { c::clangoffload_extraction_output_name(e, i, &mut name) };
                if status == Status::Ok {
                    self.handle.bytes(name)
                } else {
                    &[]
                }
            })
            .collect()
    }

    /// Every container: where it is and which outputs it gives.
    pub fn containers(&self) -> Vec<c::clangoffload_extraction_container> {
        self.handle.list(
            c::clangoffload_extraction_container_count,
            c::clangoffload_extraction_get_container,
        )
    }

    /// Streams the containers `streamer` asks for, one compressed bundle
    /// decoded at a time and up to `lanes` hashed side by side from what
    /// `streamer` reads back (`clangoffload_extraction_stream_read_back`),
    /// letting go of `input`'s pages as the library is done with them.
    pub fn stream(&self, program: &str, input: &Input, lanes: usize, streamer: &mut dyn Streamer) {
        let mut state = Streaming {
            program,
            input,
            streamer,
            error: None,
        };
        let sink = c::clangoffload_extraction_sink {
            next: Some(stream_next),
            write: Some(stream_write),
            done: Some(stream_done),
            context: std::ptr::from_mut(&mut state).cast(),
        };
        // SAFETY: the extraction is live; the sink and its context live
        // through the call; the same context serves the notes.
        let status = unsafe {
            c::clangoffload_extraction_stream_read_back(
                self.handle.ptr(),
                lanes,
                &sink,
                Some(stream_read),
                Some(stream_note),
                sink.context,
            )
        };
        if status != Status::Ok {
            let message = super::status_message(status);
            state
                .streamer
                .note(&format!("{program}: error: {message}\n"));
        }
    }

    /// Sets the bytes streaming may hold at once for decoding (`None`: the
    /// library's default).
    pub fn set_memory_budget(&mut self, bytes: Option<u64>) {
        // SAFETY: the extraction is live, and no stream runs (it is
        // borrowed mutably).
        unsafe {
            c::clangoffload_extraction_set_memory_budget(self.handle.ptr_mut(), bytes.unwrap_or(0));
        }
    }

    /// Damage found while finding the containers, each piece of it, to
    /// report once the others are written.
    pub fn failures(&self) -> &[String] {
        &self.failures
    }
}

/// Checks `-targets` as the bundler does before opening any file.
pub fn check_targets(program: &str, targets: &[&str], unbundle: bool) -> Result<(), String> {
    let views: Vec<_> = targets.iter().map(|t| view(t.as_bytes())).collect();
    with_notes(program, |notify, context| {
        // SAFETY: the views are live for the call; the sink for the call.
        unsafe {
            c::clangoffload_bundler_check_targets(
                views.as_ptr(),
                views.len(),
                unbundle,
                notify,
                context,
                std::ptr::null_mut(),
            )
        }
    })
    .map(drop)
}

/// A target as the bundler writes it.
pub fn normalize(target: &str) -> Result<String, String> {
    let mut len = 0usize;
    let mut buf = vec![0u8; target.len().saturating_mul(2).saturating_add(64)];
    // SAFETY: target is live; buf writable for its length.
    let status = unsafe {
        c::clangoffload_entry_id_normalize(
            target.as_ptr().cast(),
            target.len(),
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut len,
        )
    };
    if status != Status::Ok {
        return Err(super::status_message(status));
    }
    buf.truncate(len);
    String::from_utf8(buf).map_err(|e| e.to_string())
}

/// What a file is, by its magic.
pub fn detect(data: &[u8]) -> Option<c::clangoffload_file_kind> {
    // SAFETY: data is live for the call; the record is the library's to fill.
    record(|out| unsafe { c::clangoffload_file_kind_detect(data.as_ptr(), data.len(), out) })
}

/// What extracting a container at a time needs from its caller
/// ([`Extraction::stream`]).
pub trait Streamer {
    /// The next container to extract, its output files created; `None`
    /// when none is left.
    fn next(&mut self) -> Option<usize>;
    /// The next bytes of `output`; false stops its container.
    fn write(&mut self, output: usize, bytes: &[u8]) -> bool;
    /// Fills `bytes` with what `write` was given of `output` from
    /// `offset`; false if it cannot.
    fn read_back(&mut self, output: usize, offset: u64, bytes: &mut [u8]) -> bool;
    /// The container is done: every output written, or why not.
    fn done(&mut self, container: usize, error: Option<String>);
    /// A warning or report, as printed, for the container last handed out.
    fn note(&mut self, text: &str);
}

/// A stream's callbacks' context.
struct Streaming<'a> {
    program: &'a str,
    input: &'a Input,
    streamer: &'a mut dyn Streamer,
    /// The whole message of the failure the next `done` reports.
    error: Option<String>,
}

/// # Safety
/// `context` is the `Streaming` given with the call.
unsafe fn streaming<'a>(context: *mut std::ffi::c_void) -> &'a mut Streaming<'a> {
    // SAFETY: as the caller promises; the library calls back on the
    // calling thread only, one callback at a time.
    unsafe { &mut *context.cast::<Streaming>() }
}

unsafe extern "C" fn stream_next(context: *mut std::ffi::c_void, container: *mut usize) -> bool {
    // SAFETY: the context given with the call.
    let state = unsafe { streaming(context) };
    match state.streamer.next() {
        Some(index) => {
            // SAFETY: the library gives a writable slot.
            unsafe { *container = index };
            true
        }
        None => false,
    }
}

unsafe extern "C" fn stream_write(
    context: *mut std::ffi::c_void,
    output: usize,
    _offset: u64,
    bytes: *const u8,
    len: usize,
) -> i32 {
    // SAFETY: the context is the `Streaming` given with the call.
    let state = unsafe { streaming(context) };
    // SAFETY: the library passes `len` bytes at `bytes`, live and unchanged
    // during this call.
    let bytes = unsafe { super::slice(view_raw(bytes, len)) };
    i32::from(!state.streamer.write(output, bytes))
}

unsafe extern "C" fn stream_read(
    context: *mut std::ffi::c_void,
    output: usize,
    offset: u64,
    bytes: *mut u8,
    len: usize,
) -> i32 {
    // SAFETY: the context is the `Streaming` given with the call.
    let state = unsafe { streaming(context) };
    // SAFETY: the library passes `len` bytes at `bytes`, writable by this
    // callback only during this call.
    let bytes = unsafe { writable(bytes, len) };
    i32::from(!state.streamer.read_back(output, offset, bytes))
}

unsafe extern "C" fn stream_done(
    context: *mut std::ffi::c_void,
    container: usize,
    status: Status,
    error: *const c::clangoffload_error,
) {
    // SAFETY: the context given with the call.
    let state = unsafe { streaming(context) };
    let error = (status != Status::Ok).then(|| {
        state.error.take().unwrap_or_else(|| {
            // SAFETY: the library passes a live record.
            let record = unsafe { error.as_ref() };
            record.map_or_else(
                || super::status_message(status),
                |record| super::check(status, record).err().unwrap_or_default(),
            )
        })
    });
    state.streamer.done(container, error);
}

unsafe extern "C" fn stream_note(
    context: *mut std::ffi::c_void,
    kind: u32,
    message: *const u8,
    len: usize,
) {
    // SAFETY: the context is the `Streaming` given with the call.
    let state = unsafe { streaming(context) };
    // SAFETY: the library passes `len` bytes at `message`, live and
    // unchanged during this call.
    let bytes = unsafe { super::slice(view_raw(message, len)) };
    // Not text: a part of the input.
    if kind == c::CLANGOFFLOAD_NOTE_DONE_WITH {
        state.input.release_part(bytes);
        return;
    }
    let text = String::from_utf8_lossy(bytes);
    match kind {
        c::CLANGOFFLOAD_NOTE_WARNING => {
            let program = state.program;
            state
                .streamer
                .note(&format!("{program}: warning: {text}\n"));
        }
        c::CLANGOFFLOAD_NOTE_VERBOSE => state.streamer.note(&text),
        c::CLANGOFFLOAD_NOTE_ERROR => state.error = Some(text.into_owned()),
        _ => {}
    }
}

/// The `len` bytes at `ptr` the library lends writable during a callback.
///
/// # Safety
/// `ptr` must be writable for `len` bytes, and not read elsewhere, for
/// `'a` (the callback).
unsafe fn writable<'a>(ptr: *mut u8, len: usize) -> &'a mut [u8] {
    if ptr.is_null() || len == 0 {
        return &mut [];
    }
    // SAFETY: as the caller promises.
    unsafe { std::slice::from_raw_parts_mut(ptr, len) }
}

/// A view of `len` bytes at `ptr`, as the library passed them.
fn view_raw(ptr: *const u8, len: usize) -> c::clangoffload_bytes {
    c::clangoffload_bytes { ptr, len }
}
