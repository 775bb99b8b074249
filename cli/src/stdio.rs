//! Printing that never panics. `print!` panics when its reader has gone away
//! (`clangoffload extract F | head -1`) and `eprint!` when standard error is
//! closed; our output goes through here instead.
//!
//! A closed standard output stops the printing, not the work: `extract`
//! still writes every file. Once the work is done the process ends as
//! LLVM's tools end when their reader goes away, killed by `SIGPIPE` (status
//! 141 in a shell), unless it failed for another reason, which it reports.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether standard output's reader has gone away.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `args` to standard output, as [`out_bytes`] writes bytes.
pub fn write_out(args: fmt::Arguments<'_>) -> io::Result<()> {
    write_stdout(|stdout| stdout.write_fmt(args))
}

/// Writes `bytes` (IDs need not be UTF-8) to standard output; a closed pipe
/// is remembered, not an error. Other write errors (a full disk behind a
/// redirection) are.
pub fn out_bytes(bytes: &[u8]) -> io::Result<()> {
    write_stdout(|stdout| stdout.write_all(bytes))
}

fn write_stdout(
    write: impl FnOnce(&mut io::StdoutLock<'static>) -> io::Result<()>,
) -> io::Result<()> {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return Ok(());
    }
    match write(&mut io::stdout().lock()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::Relaxed);
            Ok(())
        }
        result => result,
    }
}

/// Writes `args` to standard error; nothing is left to tell if that fails.
pub fn write_err(args: fmt::Arguments<'_>) {
    let _ = io::stderr().lock().write_fmt(args);
}

/// The process's exit status once the work is done: flushes standard output
/// and, when its reader went away and nothing else failed, ends the process
/// by `SIGPIPE` as LLVM's tools do.
pub fn finish(status: i32) -> i32 {
    if io::stdout().lock().flush().is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
    }
    if status == 0 && STDOUT_CLOSED.load(Ordering::Relaxed) {
        // SAFETY: restoring SIGPIPE's default action, a valid signal and
        // disposition; nothing else is running by now.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
        // SAFETY: raising a valid signal in this thread, whose default
        // action (just restored) ends the process.
        unsafe { libc::raise(libc::SIGPIPE) };
    }
    status
}

/// `print!` that cannot panic; evaluates to `io::Result<()>`.
macro_rules! out {
    ($($arg:tt)*) => { $crate::stdio::write_out(format_args!($($arg)*)) };
}

/// `println!` that cannot panic; evaluates to `io::Result<()>`.
macro_rules! outln {
    ($($arg:tt)*) => { $crate::stdio::write_out(format_args!("{}\n", format_args!($($arg)*))) };
}

/// `eprint!` that cannot panic.
macro_rules! err {
    ($($arg:tt)*) => { $crate::stdio::write_err(format_args!($($arg)*)) };
}

/// `eprintln!` that cannot panic.
macro_rules! errln {
    ($($arg:tt)*) => { $crate::stdio::write_err(format_args!("{}\n", format_args!($($arg)*))) };
}

pub(crate) use {err, errln, out, outln};

/// Standard output as a writer, through [`out_bytes`].
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        out_bytes(bytes)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
