//! A job's notes to the caller (`clangoffload_notify_fn`): warnings,
//! `-verbose` reports, whole error messages, and the parts of the input a
//! job is done with.

use alloc::string::String;
use core::ffi::c_void;

use clangoffload::bundler::{self, BundlerError, Note, Warning};

/// `clangoffload_bundler_options.flags` (and `clangoffload_bundle_request`'s):
/// report what LLVM's `-verbose` prints (as `CLANGOFFLOAD_NOTE_VERBOSE`).
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

/// Forwards core's notes to the caller's `notify`, timing decoding and
/// compression for the verbose reports where the build has a clock (the
/// bundler's jobs and the packager's).
pub(crate) struct Notifier {
    notify: clangoffload_notify_fn,
    context: *mut c_void,
    pub(crate) input_name: String,
    /// Whether verbose reports are wanted (`CLANGOFFLOAD_VERBOSE`).
    verbose: bool,
    /// Whether the caller wants `CLANGOFFLOAD_NOTE_DONE_WITH`.
    done_with: bool,
    #[cfg(feature = "std")]
    started: Option<std::time::Instant>,
}

impl Notifier {
    pub(crate) fn new(
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

    pub(crate) fn send(&self, kind: u32, text: &str) {
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

    pub(super) fn error(&self, e: &BundlerError) {
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
